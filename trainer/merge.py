"""Merge model: `python -m trainer merge SPEC.json` merges a finished run's adapter into its base model and writes
the full checkpoint to the run's storage.

It loads the base model, applies the adapter with peft's `merge_and_unload`, saves the checkpoint and the tokenizer,
and uploads them under `runs/<run id>/merged/` (beside the run's adapter and rollouts) in the storage the spec
names, with the credentials of its environment (as a run's trainer gets them); `merge.json` goes last, so a whole
checkpoint is one that has it. Like the other trainer commands, stdout carries its progress record only, one JSON
line at the end:

- `merge_completed`: where the checkpoint is, its files and their size;
- `failed`: why not, in one sentence (its error line, never a traceback: that goes to stderr, the worker's log).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from trainer.progress import write_json_line
from trainer.spec import Storage

log = logging.getLogger(__name__)

MARKER = "merge.json"


@dataclass(frozen=True)
class MergeSpec:
    """What the merge needs; the jobs build it from the run (jobs/merge.py)."""

    run_id: str
    model: str  # the base model: a hub id or a folder on the worker
    adapter: str  # the adapter's location, as the run saved it
    best_round: int
    storage: Storage  # the run's storage: the adapter's and the checkpoint's

    @property
    def prefix(self) -> str:
        return f"runs/{self.run_id}/merged/"

    @property
    def adapter_key(self) -> str:
        """The adapter's key in the storage, as a person reads it (never the worker's path)."""
        root = self.storage.location.rstrip("/") + "/"
        return self.adapter[len(root):] if self.adapter.startswith(root) else self.adapter

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MergeSpec:
        return cls(**{**data, "storage": Storage(**data["storage"])})


class MergeProblem(Exception):
    """What keeps the merge from happening, in words (the job records it)."""


def merge_into_checkpoint(spec: MergeSpec) -> dict[str, Any]:
    """Load the base model, merge the adapter in, upload the checkpoint; returns what merge.json says."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.output_head import adapter_targets_head, untie_output_head
    from trainer.storage import fetch_folder, open_storage

    storage = open_storage(spec.storage)
    with tempfile.TemporaryDirectory(prefix="verity-merge-") as work:
        if spec.model.startswith(("/", "./", "~")) and not Path(spec.model).expanduser().is_dir():
            raise MergeProblem(f"the base model {spec.model} is not on this worker")
        adapter = fetch_folder(spec.adapter, Path(work) / "adapter", spec.storage.endpoint_url)
        if not (adapter / "adapter_config.json").is_file():
            raise MergeProblem(f"the adapter is not in the storage at {spec.adapter_key}")
        base = AutoModelForCausalLM.from_pretrained(spec.model)
        if adapter_targets_head(adapter, base):  # a Head run's update must not reach a tied input embedding
            untie_output_head(base)
        merged = PeftModel.from_pretrained(base, str(adapter)).merge_and_unload()
        out = Path(work) / "merged"
        merged.save_pretrained(out)
        AutoTokenizer.from_pretrained(spec.model).save_pretrained(out)
        model_dir = Path(spec.model)
        if model_dir.is_dir():  # files a local model ships beside its weights (its chat template, its notes)
            for extra in model_dir.iterdir():
                if extra.is_file() and not (out / extra.name).exists() and not extra.name.endswith(".safetensors"):
                    shutil.copyfile(extra, out / extra.name)
        files = sorted(path.name for path in out.iterdir())
        for name in files:
            storage.put_file(spec.prefix + name, out / name)
        size = sum((out / name).stat().st_size for name in files)
    summary = {
        "location": storage.location(spec.prefix),
        "files": files,
        "size_bytes": size,
        "base_model": spec.model,
        "best_round": spec.best_round,
    }
    storage.put_bytes(spec.prefix + MARKER, json.dumps(summary).encode())  # last: the checkpoint is whole
    return summary


def merge(spec: MergeSpec, emit: Callable[[dict[str, Any]], None]) -> bool:
    """Merges and emits how it went; True when the checkpoint is whole."""
    try:
        summary = merge_into_checkpoint(spec)
    except MergeProblem as problem:
        emit({"type": "failed", "message": str(problem)})
        return False
    except Exception as error:  # e.g. a full disk: its error line, as the log's last line would say it
        log.exception("the merge of run %s failed", spec.run_id)
        emit({"type": "failed", "message": f"{type(error).__name__}: {error}"})
        return False
    emit({"type": "merge_completed", **summary})
    return True


def merge_from_file(path: str) -> int:
    spec = MergeSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if merge(spec, write_json_line) else 1
