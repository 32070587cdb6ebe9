"""Merge model: a finished run's adapter merged into its base model, written to the run's storage as a full
checkpoint.

The app records MergeRequested and sends `merge_model(run_id)`. The actor reads the run and runs the merge in a
child process (`python -m jobs.merge SPEC.json`), so torch and peft load neither in the web process (the embedded
worker lives there) nor in a long-lived worker. The child loads the base model, applies the adapter with peft's
`merge_and_unload`, saves the checkpoint and the tokenizer, and uploads them under `runs/<run id>/merged/` in the
organization's storage (with its credentials, as a run's trainer gets them); `merge.json` goes last. The actor
then records ModelMerged, or MergeFailed with the reason, so the run page and its timeline say how it went.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import dramatiq
from dramatiq.middleware import Shutdown, TimeLimitExceeded

from domain.actors import Actor
from domain.runs.merge import MERGING, merged_prefix
from domain.storage_keys import storage_key
from jobs.config import DEFAULT_PROVIDER
from jobs.context import RECONCILER, JobContext
from jobs.recording import with_fresh_run
from jobs.run_storage import StorageUnreadable, run_storage
from verity.data_folder import keep_new_files_private

log = logging.getLogger(__name__)

MERGE_TIME_LIMIT_MS = 6 * 3600 * 1000
MARKER = "merge.json"

WORKER_STOPPED = (
    "The worker merging this run was stopped before the merge finished, so nothing was merged. Merge model "
    "tries again."
)
LOST_AT_RESTART = (
    "The console was restarted before the merge finished, so nothing was merged. Merge model tries again."
)
TOO_LONG = "The merge did not finish within {hours:g} hours, so it was stopped. Merge model tries again."


def merge_failed_message(reason: str) -> str:
    return f"The merge failed: {reason} The adapter is unchanged; Merge model tries again."


class MergeRefused(Exception):
    """The run has no merge to do now; the message says why."""


class MergeChildFailed(Exception):
    """The child's error line, e.g. "OSError: [Errno 28] No space left on device"."""


def merge_spec(ctx: JobContext, run_id: UUID) -> tuple[dict[str, Any], dict[str, str]]:
    """What the child needs (the base model, the adapter's location, the run's storage) and its environment."""
    run = ctx.verity.get_run(None, run_id)
    if run.adapter is None or run.merge is None or run.merge["state"] != MERGING:
        raise MergeRefused("No merge of this run is under way.")
    storage = run_storage(ctx.settings, ctx.verity, run.org_id)
    spec = {
        "run_id": str(run_id),
        "model": run.model,
        "adapter": run.adapter["location"],
        "best_round": run.adapter["best_round"],
        "storage": {"location": storage.storage.location, "endpoint_url": storage.storage.endpoint_url},
    }
    return spec, storage.child_environment(dict(os.environ))


def run_merge_child(spec: dict[str, Any], environment: dict[str, str], timeout: float) -> dict[str, Any]:
    """Run the merge in its own process and wait; returns what merge.json says. A failure raises
    MergeChildFailed with the child's last words (its error line, never its whole traceback)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(spec, handle)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jobs.merge", handle.name],
            capture_output=True, text=True, timeout=timeout, env=environment,
        )
    finally:
        Path(handle.name).unlink(missing_ok=True)
    if done.returncode != 0:
        log.error("the merge of run %s failed:\n%s", spec["run_id"], done.stderr[-4000:])
        raise MergeChildFailed(_last_line(done.stderr) or f"the merge process exited with code {done.returncode}.")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def merge(ctx: JobContext, run_id: UUID) -> None:
    """The actor's work: merge if the run still asks for it, and record how it went."""
    try:
        spec, environment = merge_spec(ctx, run_id)
    except MergeRefused as refused:  # a message delivered twice, or after the merge ended
        log.info("run %s: %s", run_id, refused)
        return
    except StorageUnreadable as unreadable:
        _record_failure(ctx, run_id, str(unreadable))
        return
    try:
        summary = run_merge_child(spec, environment, timeout=MERGE_TIME_LIMIT_MS / 1000)
    except subprocess.TimeoutExpired:
        _record_failure(ctx, run_id, TOO_LONG.format(hours=MERGE_TIME_LIMIT_MS / 3_600_000))
        return
    except MergeChildFailed as failed:
        _record_failure(ctx, run_id, merge_failed_message(_sentence(str(failed))))
        return
    except (Shutdown, TimeLimitExceeded):  # the worker stops (or dramatiq's limit struck): say so, then stop
        _record_failure(ctx, run_id, WORKER_STOPPED)
        raise
    with_fresh_run(
        ctx.verity, run_id,
        lambda run: ctx.verity.record_model_merged(
            run_id, summary["location"], summary["files"], summary["size_bytes"], ctx.worker_actor
        ),
    )
    log.info("run %s merged into %s", run_id, summary["location"])


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _record_failure(ctx: JobContext, run_id: UUID, message: str, actor: Actor | None = None) -> None:
    log.warning("run %s: %s", run_id, message)
    with_fresh_run(
        ctx.verity, run_id, lambda run: ctx.verity.record_merge_failed(run_id, message, actor or ctx.worker_actor)
    )


def fail_merges_lost_at_restart(ctx: JobContext) -> list[UUID]:
    """On the embedded default the queue lives in memory and this process is the only worker: a merge asked for
    before a restart will never run, so it ends in words instead of showing "on its way" for ever. (A production
    broker redelivers a dead worker's message, and the merge runs again.)"""
    if ctx.read_models is None:
        return []
    lost = ctx.read_models.merging_runs()
    for run_id in lost:
        _record_failure(ctx, run_id, LOST_AT_RESTART, RECONCILER)
    return lost


def declare_merge_actor(broker: dramatiq.Broker, ctx: JobContext) -> dramatiq.Actor:
    """`merge_model(run_id)` on the provider queue: merging needs the memory of a worker machine."""

    def merge_model(run_id: str) -> None:
        merge(ctx, UUID(run_id))

    return dramatiq.actor(
        merge_model,
        actor_name="merge_model",
        queue_name=DEFAULT_PROVIDER,
        broker=broker,
        max_retries=0,
        time_limit=MERGE_TIME_LIMIT_MS + 60_000,  # the child's own timeout strikes first and is said in words
    )


def merge_sender(actor: dramatiq.Actor) -> Callable[[UUID], None]:
    """What the app calls once MergeRequested is recorded (create_app(..., merger=...))."""

    def send(run_id: UUID) -> None:
        actor.send(str(run_id))

    return send


# --- the child: torch and peft load only here ---------------------------------------------------------------


class MergeProblem(Exception):
    """What keeps the child from merging, in words (the actor records it)."""


def merge_into_checkpoint(spec: dict[str, Any]) -> dict[str, Any]:
    """Load the base model, merge the adapter in, upload the checkpoint; returns what merge.json says."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.output_head import adapter_targets_head, untie_output_head
    from trainer.spec import Storage
    from trainer.storage import fetch_folder, open_storage

    where = Storage(**spec["storage"])
    storage, prefix = open_storage(where), merged_prefix(spec["run_id"])
    with tempfile.TemporaryDirectory(prefix="verity-merge-") as work:
        if spec["model"].startswith(("/", "./", "~")) and not Path(spec["model"]).expanduser().is_dir():
            raise MergeProblem(f"the base model {spec['model']} is not on this worker")
        adapter = fetch_folder(spec["adapter"], Path(work) / "adapter", where.endpoint_url)
        if not (adapter / "adapter_config.json").is_file():
            raise MergeProblem(f"the adapter is not in the storage at {storage_key(spec['adapter'])}")
        base = AutoModelForCausalLM.from_pretrained(spec["model"])
        if adapter_targets_head(adapter, base):  # a Head run's update must not reach a tied input embedding
            untie_output_head(base)
        merged = PeftModel.from_pretrained(base, str(adapter)).merge_and_unload()
        out = Path(work) / "merged"
        merged.save_pretrained(out)
        AutoTokenizer.from_pretrained(spec["model"]).save_pretrained(out)
        model_dir = Path(spec["model"])
        if model_dir.is_dir():  # files a local model ships beside its weights (its chat template, its notes)
            for extra in model_dir.iterdir():
                if extra.is_file() and not (out / extra.name).exists() and not extra.name.endswith(".safetensors"):
                    shutil.copyfile(extra, out / extra.name)
        files = sorted(path.name for path in out.iterdir())
        for name in files:
            storage.put_file(prefix + name, out / name)
        size = sum((out / name).stat().st_size for name in files)
    summary = {
        "location": storage.location(prefix),
        "files": files,
        "size_bytes": size,
        "base_model": spec["model"],
        "best_round": spec["best_round"],
    }
    storage.put_bytes(prefix + MARKER, json.dumps(summary).encode())  # last: the checkpoint is whole
    return summary


def main(argv: list[str]) -> int:
    """Logs go to stderr; the one line on stdout is the summary the actor records."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        summary = merge_into_checkpoint(json.loads(Path(argv[0]).read_text()))
    except MergeProblem as problem:
        print(problem, file=sys.stderr)  # the last line: what the actor records
        return 1
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    keep_new_files_private()  # the merged checkpoint lands in the data folder's storage: owner-only
    sys.exit(main(sys.argv[1:]))
