"""Re-scorings as jobs: the spec from the event store (which files of stored answers, the other reward), `python -m
trainer rescore` as a child process watched by the jobs' supervisor (jobs/supervisor.py), its progress lines turned
into domain commands. The actor is declared in jobs/actors.py; the dispatcher sends it for each Rescoring.Saved
(jobs/dispatch_routes.py).

The answers are read where they were written: the organization's storage (jobs/run_storage.py), whose
credentials reach the child only through its environment. The child writes only its own answers file.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.application import Verity
from domain.probes.summary import answers_key as probe_answers_key
from domain.rescorings.rescoring import Rescoring
from domain.storage_keys import rollout_key
from jobs import retrying
from jobs.context import JobContext
from jobs.dispatch_routes import RESCORING
from jobs.run_storage import RunStorage, StorageUnreadable, run_storage
from jobs.specs import SpecUnbuildable, _reward_spec
from jobs.supervisor import Child, Supervisor, timing_of
from jobs.work_claims import Claim, work_on_claimed
from trainer.rescore import RescoreSpec, StoredAnswers

log = logging.getLogger(__name__)
RESCORER = Actor("system", "rescorer", "Re-scorer")
RESCORE_TIME_LIMIT_SECONDS = 6 * 3600
WATCHDOG_STOPPED = (
    "The re-scoring was still scoring {hours:g} hours after it started, so the watchdog stopped it. Make the "
    "metric faster, or re-score a smaller source."
)
STOPPED_EARLY = "The re-scoring's process stopped before it ended; its last lines are in the worker's log."


def stored_answers(rescoring: Rescoring) -> list[StoredAnswers]:
    """The files its answers are in: each round's rollouts of a run, or a probe's answers file (its round 1)."""
    source_id = rescoring.source["id"]
    if rescoring.source["kind"] == "probe":
        return [StoredAnswers(1, probe_answers_key(source_id))]
    return [StoredAnswers(number, rollout_key(source_id, number)) for number in rescoring.rounds]


def build_rescore_spec(ctx: JobContext, rescoring: Rescoring, storage: RunStorage) -> RescoreSpec:
    return RescoreSpec(
        rescoring_id=str(rescoring.id), files=stored_answers(rescoring),
        reward=_reward_spec(ctx.verity, rescoring.org_id, rescoring.reward), storage=storage.storage,
    )


def _apply(command: Callable[[], object], rescoring_id: UUID) -> bool:
    return retrying.record(command, f"re-scoring {rescoring_id}")


def run_rescoring(ctx: JobContext, rescoring_id: UUID) -> None:
    """Score it if it is still Queued (a message delivered twice finds it scoring, and does nothing); every outcome
    is recorded on it."""
    work_on_claimed(ctx, rescoring_id, RESCORING, lambda work_id: ctx.verity.get_rescoring(None, work_id), _rescore)


def _rescore(ctx: JobContext, rescoring: Rescoring, held: Claim) -> None:
    verity, rescoring_id = ctx.verity, rescoring.id
    if not _apply(lambda: verity.record_rescoring_scoring(rescoring_id, RESCORER), rescoring_id):
        return
    try:
        storage = run_storage(ctx.settings, verity, rescoring.org_id)
        spec = build_rescore_spec(ctx, rescoring, storage)
    except (SpecUnbuildable, StorageUnreadable) as problem:
        message = str(problem)
        _apply(lambda: verity.record_rescoring_failed(rescoring_id, message, RESCORER), rescoring_id)
        return
    records = RescoringRecords(verity, rescoring_id)
    outcome = Supervisor(
        Child("rescore", spec.to_dict(), f"re-scoring {str(rescoring_id)[:8]}"),
        records,
        timing_of(ctx.config),
        kill_at=time.time() + RESCORE_TIME_LIMIT_SECONDS,
        cancelled=lambda: False,
        beat=held.beat,
        environment=storage.child_environment,  # the organization's storage credentials reach the child only here
    ).run()
    if outcome.finished or records.finished or outcome.reason == "lost":  # lost: the reconciler already ended it
        return
    message = (
        WATCHDOG_STOPPED.format(hours=RESCORE_TIME_LIMIT_SECONDS / 3600) if outcome.reason == "watchdog"
        else STOPPED_EARLY
    )
    _apply(lambda: verity.record_rescoring_failed(rescoring_id, message, RESCORER), rescoring_id)


class RescoringRecords:
    """The child's lines as commands on the re-scoring (the supervisor's `Records`)."""

    def __init__(self, verity: Verity, rescoring_id: UUID) -> None:
        self.verity = verity
        self.rescoring_id = rescoring_id
        self.finished = False

    def record_line(self, data: dict[str, Any]) -> None:
        verity, rescoring_id = self.verity, self.rescoring_id
        if data["type"] == "rescoring_scored":
            self.finished = True
            _apply(lambda: verity.record_rescoring_scored(rescoring_id, data["summary"], RESCORER), rescoring_id)
        elif data["type"] == "failed":
            self.finished = True
            _apply(lambda: verity.record_rescoring_failed(rescoring_id, data["message"], RESCORER), rescoring_id)
