"""Merge model: a finished run's adapter merged into its base model, written to storage as a full checkpoint.

The actor `merge_model(run_id)` takes an id, reads the run, and runs the merge in a child process
(`python -m jobs.merge SPEC.json`), so torch and peft load neither in the web process (the embedded worker
lives there) nor in a long-lived worker. The child loads the base model, applies the adapter with peft's
`merge_and_unload`, saves the checkpoint and the tokenizer, and uploads them under `runs/<run id>/merged/`;
`merge.json` goes last, so the console shows the merged model only once all of it is there.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import dramatiq

from jobs.config import DEFAULT_PROVIDER
from jobs.context import JobContext
from verity.config import Settings

log = logging.getLogger(__name__)

MERGE_TIME_LIMIT_MS = 6 * 3600 * 1000
MARKER = "merge.json"


class MergeRefused(Exception):
    """The run has nothing to merge; the message says why."""


def merged_prefix(run_id: object) -> str:
    return f"runs/{run_id}/merged/"


def merge_spec(ctx: JobContext, run_id: UUID) -> dict[str, Any]:
    """What the child needs: the base model, the adapter's location, and where the checkpoint goes."""
    run = ctx.verity.get_run(None, run_id)
    if run.adapter is None:
        raise MergeRefused("Only a run whose adapter is ready can be merged into a model.")
    return {
        "run_id": str(run_id),
        "model": run.model,
        "adapter": run.adapter["location"],
        "best_round": run.adapter["best_round"],
        "s3_endpoint_url": ctx.settings.s3_endpoint_url,
    }


def run_merge_child(spec: dict[str, Any], timeout: float = 6 * 3600) -> None:
    """Run the merge in its own process (its environment carries the storage settings) and wait."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jobs.merge", handle.name], capture_output=True, text=True, timeout=timeout
        )
    finally:
        Path(handle.name).unlink(missing_ok=True)
    if done.returncode != 0:
        raise RuntimeError(f"the merge of run {spec['run_id']} failed: {done.stderr[-2000:]}")


def declare_merge_actor(broker: dramatiq.Broker, ctx: JobContext) -> dramatiq.Actor:
    """`merge_model(run_id)` on the provider queue: merging needs the memory of a worker machine."""

    def merge_model(run_id: str) -> None:
        try:
            spec = merge_spec(ctx, UUID(run_id))
        except MergeRefused as refused:
            log.warning("run %s: %s", run_id, refused)
            return
        run_merge_child(spec)
        log.info("run %s merged into %s", run_id, merged_prefix(run_id))

    return dramatiq.actor(
        merge_model,
        actor_name="merge_model",
        queue_name=DEFAULT_PROVIDER,
        broker=broker,
        max_retries=0,
        time_limit=MERGE_TIME_LIMIT_MS,
    )


def merge_sender(actor: dramatiq.Actor) -> Callable[[UUID], None]:
    """What the app calls on Merge model (create_app(..., merger=...))."""

    def send(run_id: UUID) -> None:
        actor.send(str(run_id))

    return send


# --- the child: torch and peft load only here ---------------------------------------------------------------


def merge_into_checkpoint(spec: dict[str, Any], storage: Any) -> dict[str, Any]:
    """Load the base model, merge the adapter in, upload the checkpoint; returns what merge.json says."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.storage import fetch_folder

    prefix = merged_prefix(spec["run_id"])
    with tempfile.TemporaryDirectory(prefix="verity-merge-") as work:
        adapter = fetch_folder(spec["adapter"], Path(work) / "adapter", spec.get("s3_endpoint_url"))
        base = AutoModelForCausalLM.from_pretrained(spec["model"])
        merged = PeftModel.from_pretrained(base, str(adapter)).merge_and_unload()
        out = Path(work) / "merged"
        merged.save_pretrained(out)
        AutoTokenizer.from_pretrained(spec["model"]).save_pretrained(out)
        model_dir = Path(spec["model"])
        if model_dir.is_dir():  # files a local model ships beside its weights (its chat template, its notes)
            for extra in model_dir.iterdir():
                if extra.is_file() and not (out / extra.name).exists() and not extra.name.endswith(".safetensors"):
                    shutil.copyfile(extra, out / extra.name)
        files, size = [], 0
        for path in sorted(out.iterdir()):
            staged = storage.stage(prefix + path.name)
            with path.open("rb") as source:
                for block in iter(lambda source=source: source.read(1 << 20), b""):
                    staged.write(block)
            staged.commit()
            files.append(path.name)
            size += path.stat().st_size
    summary = {
        "location": prefix,
        "files": files,
        "size_bytes": size,
        "base_model": spec["model"],
        "best_round": spec["best_round"],
    }
    marker = storage.stage(prefix + MARKER)
    marker.write(json.dumps(summary).encode())
    marker.commit()
    return summary


def main(argv: list[str]) -> int:
    from verity.storage import open_storage

    spec = json.loads(Path(argv[0]).read_text())
    merge_into_checkpoint(spec, open_storage(Settings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
