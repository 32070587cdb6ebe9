"""Evaluations as jobs: the spec from the event store, `python -m trainer evaluate` as a child process watched by
the supervisor every child of the jobs has (jobs/supervisor.py: a cancel stops it, and so does the watchdog past
its time limit), its progress lines turned into domain commands. The actor is declared in jobs/actors.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.application import Verity
from domain.errors import NotFound
from domain.evaluations.benchmarks import math_pairs_held_out_rows
from domain.evaluations.evaluation import CANCELLED, Evaluation
from jobs import retrying
from jobs.context import JobContext
from jobs.dispatch_routes import EVALUATION
from jobs.run_storage import RunStorage, StorageUnreadable, run_storage
from jobs.specs import SpecUnbuildable, _project_revision, _reward_spec, run_revision
from jobs.supervisor import Child, Supervisor, timing_of
from jobs.work_claims import Claim, work_on_claimed
from trainer.evaluate import EvaluationSpec
from trainer.spec import ModelRef, Row, StartAdapter
from verity.storage import open_storage as open_file_storage
from verity.storage import read_rows

log = logging.getLogger(__name__)
EVALUATOR = Actor("system", "evaluator", "Evaluator")


def test_rows(ctx: JobContext, evaluation: Evaluation) -> list[dict]:
    """The evaluation's test examples: a version's test split (read from storage), or a benchmark's problems."""
    source = evaluation.source
    if source["kind"] == "benchmark":
        return list(math_pairs_held_out_rows(int(source.get("count", 64))))
    version = ctx.verity.get_dataset_version(evaluation.org_id, UUID(source["id"]))
    rows = list(read_rows(open_file_storage(ctx.settings), version.storage_key, "test"))
    if not rows:
        raise SpecUnbuildable(f"The storage holds none of {version.label}'s test examples.")
    return rows


def model_revision(ctx: JobContext, evaluation: Evaluation) -> str | None:
    """An adapter is scored on the revision its run trained on (an adapter on another revision's weights would
    score something no one trained); the base model on the project's."""
    if evaluation.adapter_run is not None:
        try:
            return run_revision(ctx.verity, ctx.verity.get_run(evaluation.org_id, evaluation.adapter_run))
        except NotFound:
            pass  # the run is gone: the project's revision is the best guess left
    return _project_revision(ctx.verity, evaluation)  # type: ignore[arg-type]


def build_evaluation_spec(ctx: JobContext, evaluation: Evaluation, storage: RunStorage | None = None) -> EvaluationSpec:
    """`storage`: the organization's (where its runs' adapters are); the server's default when None."""
    reward = {**evaluation.scoring, "metric": evaluation.main_metric}
    adapter = evaluation.adapter
    storage = storage or run_storage(ctx.settings, ctx.verity, evaluation.org_id)
    return EvaluationSpec(
        evaluation_id=str(evaluation.id),
        model=ModelRef(path_or_id=evaluation.model, revision=model_revision(ctx, evaluation)),
        rows=[Row(prompt=list(r["prompt"]), reference=r["reference"]) for r in test_rows(ctx, evaluation)],
        reward=_reward_spec(ctx.verity, evaluation.org_id, reward),
        storage=storage.storage,
        adapter=StartAdapter(adapter["location"], adapter["sha256"], int(adapter["size_bytes"])) if adapter else None,
        max_answer_tokens=evaluation.max_answer_tokens,
    )


EVALUATION_TIME_LIMIT_SECONDS = 24 * 3600
WATCHDOG_STOPPED = (
    "The evaluator was still running {hours:g} hours after it started, so the watchdog stopped it. Evaluate fewer "
    "examples, or shorter answers."
)
STOPPED_EARLY = "The evaluator process stopped before the evaluation ended; its last lines are in the worker's log."


def _apply(command: Callable[[], object], evaluation_id: UUID) -> bool:
    """A command on the evaluation as it is now, by the jobs' one rule for retrying (jobs/retrying.py); False when
    it no longer applies (cancelled meanwhile)."""
    return retrying.record(command, f"evaluation {evaluation_id}")


def run_evaluation(ctx: JobContext, evaluation_id: UUID) -> None:
    """Score the evaluation if it is still Queued (a message delivered twice finds it started, and does nothing);
    every outcome is recorded on it."""
    work_on_claimed(ctx, evaluation_id, EVALUATION, lambda work_id: ctx.verity.get_evaluation(None, work_id), _score)


def _score(ctx: JobContext, evaluation: Evaluation, held: Claim) -> None:
    verity, evaluation_id = ctx.verity, evaluation.id
    if not _apply(lambda: verity.record_evaluation_started(evaluation_id, EVALUATOR), evaluation_id):
        return
    try:
        storage = run_storage(ctx.settings, verity, evaluation.org_id)
        spec = build_evaluation_spec(ctx, evaluation, storage)
    except (SpecUnbuildable, StorageUnreadable, NotFound, OSError) as problem:
        message = (
            str(problem)
            if isinstance(problem, (SpecUnbuildable, StorageUnreadable))
            else f"The test examples could not be read ({type(problem).__name__})."
        )
        _apply(lambda: verity.record_evaluation_failed(evaluation_id, message, EVALUATOR), evaluation_id)
        return
    outcome = Supervisor(
        Child("evaluate", spec.to_dict(), f"evaluation {str(evaluation_id)[:8]}"),
        EvaluationRecords(verity, evaluation_id),
        timing_of(ctx.config),
        kill_at=time.time() + EVALUATION_TIME_LIMIT_SECONDS,
        cancelled=lambda: verity.get_evaluation(None, evaluation_id).state == CANCELLED,
        beat=held.beat,
        environment=storage.child_environment,  # its credentials reach the child only here, as a run's do
    ).run()
    if outcome.finished or outcome.reason in ("cancelled", "lost"):  # lost: the reconciler already ended it
        return
    message = (
        WATCHDOG_STOPPED.format(hours=EVALUATION_TIME_LIMIT_SECONDS / 3600)
        if outcome.reason == "watchdog" else STOPPED_EARLY
    )
    _apply(lambda: verity.record_evaluation_failed(evaluation_id, message, EVALUATOR), evaluation_id)


class EvaluationRecords:
    """The evaluator's lines as commands on the evaluation (the supervisor's `Records`)."""

    def __init__(self, verity: Verity, evaluation_id: UUID) -> None:
        self.verity = verity
        self.evaluation_id = evaluation_id
        self.finished = False  # the evaluator said how the evaluation ended

    def record_line(self, data: dict[str, Any]) -> None:
        verity, evaluation_id = self.verity, self.evaluation_id
        if data["type"] == "evaluation_completed":
            self.finished = True
            _apply(lambda: verity.record_evaluation_completed(
                evaluation_id, float(data["score"]), data["breakdown"], data["results"], EVALUATOR,
                metric_failures=data.get("metric_failures")), evaluation_id)
        elif data["type"] == "failed":
            self.finished = True
            _apply(lambda: verity.record_evaluation_failed(evaluation_id, data["message"], EVALUATOR), evaluation_id)
