"""Merge model: a finished run's adapter merged into its base model, written to the run's storage as a full
checkpoint.

The console records MergeRequested; the dispatcher (jobs/dispatcher.py) sends `merge_model(run_id)`. The actor reads
the run and supervises `python -m trainer merge SPEC.json` (trainer/merge.py) with the supervisor every child of the
jobs has (jobs/supervisor.py), so torch and peft load neither in the web process (the embedded worker lives there)
nor in a long-lived worker, and a merge past its time limit is stopped by the watchdog. The child's last line says
how it went; the actor records ModelMerged, or MergeFailed with the reason, so the run page and its timeline say so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

from dramatiq.middleware import Shutdown, TimeLimitExceeded

from domain.actors import Actor
from domain.application import Verity
from domain.runs.merge import MERGING
from jobs.context import JOBS, RECONCILER, JobContext
from jobs.recording import with_fresh_run
from jobs.run_storage import StorageUnreadable, run_storage
from jobs.supervisor import Child, Supervisor, describe_exit, timing_of
from trainer.merge import MergeSpec

log = logging.getLogger(__name__)

MERGE_TIME_LIMIT_SECONDS = 6 * 3600

WORKER_STOPPED = (
    "The worker merging this run was stopped before the merge finished, so nothing was merged. Merge model "
    "tries again."
)
LOST_AT_RESTART = (
    "The console was restarted before the merge finished, so nothing was merged. Merge model tries again."
)
TOO_LONG = "The merge did not finish within {hours:g} hours, so it was stopped. Merge model tries again."
NOT_SENT = (
    "The merge could not be sent to a worker: the job queue is out of reach, so nothing was merged. Merge model "
    "tries again."
)


def merge_failed_message(reason: str) -> str:
    return f"The merge failed: {reason} The adapter is unchanged; Merge model tries again."


class MergeRefused(Exception):
    """The run has no merge to do now; the message says why."""


def merge_spec(ctx: JobContext, run_id: UUID) -> tuple[MergeSpec, Callable[[dict[str, str]], dict[str, str]]]:
    """What the child needs (the base model, the adapter's location, the run's storage), and how the worker's
    environment becomes its own (the storage's credentials go there, never into the spec file)."""
    run = ctx.verity.get_run(None, run_id)
    if run.adapter is None or run.merge is None or run.merge["state"] != MERGING:
        raise MergeRefused("No merge of this run is under way.")
    storage = run_storage(ctx.settings, ctx.verity, run.org_id)
    spec = MergeSpec(
        run_id=str(run_id),
        model=run.model,
        adapter=run.adapter["location"],
        best_round=run.adapter["best_round"],
        storage=storage.storage,
    )
    return spec, storage.child_environment


class MergeRecords:
    """The child's one line: the checkpoint's summary, or why it failed (the supervisor's `Records`)."""

    def __init__(self) -> None:
        self.finished = False
        self.summary: dict[str, Any] | None = None
        self.failure: str | None = None

    def record_line(self, data: dict[str, Any]) -> None:
        if data["type"] == "merge_completed":
            self.finished, self.summary = True, data
        elif data["type"] == "failed":
            self.finished, self.failure = True, str(data.get("message") or "the merge process said nothing more.")


def merge(ctx: JobContext, run_id: UUID) -> None:
    """The actor's work: merge if the run still asks for it (a message delivered twice, or after the merge ended,
    does nothing), and record how it went."""
    try:
        spec, environment = merge_spec(ctx, run_id)
    except MergeRefused as refused:
        log.info("run %s: %s", run_id, refused)
        return
    except StorageUnreadable as unreadable:
        _record_failure(ctx, run_id, str(unreadable))
        return
    records = MergeRecords()
    supervisor = Supervisor(
        Child("merge", spec.to_dict(), f"merge {str(run_id)[:8]}"),
        records,
        timing_of(ctx.config),
        kill_at=time.time() + MERGE_TIME_LIMIT_SECONDS,
        environment=environment,
    )
    try:
        outcome = supervisor.run()
    except (Shutdown, TimeLimitExceeded):  # the worker stops (or dramatiq's limit struck): say so, then stop
        _record_failure(ctx, run_id, WORKER_STOPPED)
        raise
    if records.summary is not None:
        summary = records.summary
        with_fresh_run(
            ctx.verity, run_id,
            lambda run: ctx.verity.record_model_merged(
                run_id, summary["location"], summary["files"], summary["size_bytes"], ctx.worker_actor
            ),
        )
        log.info("run %s merged into %s", run_id, summary["location"])
    elif outcome.reason == "watchdog":
        _record_failure(ctx, run_id, TOO_LONG.format(hours=MERGE_TIME_LIMIT_SECONDS / 3600))
    else:
        reason = records.failure or f"the merge process stopped: {describe_exit(outcome.returncode)}."
        _record_failure(ctx, run_id, merge_failed_message(_sentence(reason)))


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _record_failure(ctx: JobContext, run_id: UUID, message: str, actor: Actor | None = None) -> None:
    log.warning("run %s: %s", run_id, message)
    with_fresh_run(
        ctx.verity, run_id, lambda run: ctx.verity.record_merge_failed(run_id, message, actor or ctx.worker_actor)
    )


def merge_not_sent(verity: Verity, run_id: UUID) -> None:
    """The dispatcher could not put the merge on a queue: it ends in words at once, and Merge model asks again."""
    log.warning("run %s: %s", run_id, NOT_SENT)
    with_fresh_run(verity, run_id, lambda run: verity.record_merge_failed(run_id, NOT_SENT, JOBS))


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
