"""What a training loop and an experiment share as the jobs drive them through runs and evaluations: the step the
jobs take next (`LoopStep`), and `JobSteps`, a mixin of their commands (domain/loops/commands.py,
domain/experiments/commands.py) that waits on an evaluation, fails on a job that ended badly, and cancels the
live jobs when they are stopped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

from domain.actors import Actor
from domain.evaluations.evaluation import COMPLETED as EVALUATION_COMPLETED
from domain.evaluations.evaluation import LIVE as EVALUATION_LIVE
from domain.evaluations.evaluation import Evaluation
from domain.experiments.experiment import Experiment
from domain.loops.loop import TrainingLoop
from domain.runs.states import RUNNING


@dataclass(frozen=True)
class LoopStep:
    """What the jobs do next: train a run, evaluate, or nothing (the loop ended or waits on a live job)."""

    action: Literal["train", "evaluate", "wait", "done"]
    target_id: UUID | None = None


class JobSteps:
    # provided by Verity
    _save: Any
    get_run: Any
    get_evaluation: Any

    def _fail_ended(self, driven: TrainingLoop | Experiment, what: str, failure: str | None, actor: Actor) -> LoopStep:
        """`driven` fails because the job it waited on ended without what it needs: "<what>: <failure>"."""
        driven.fail(what + (f": {failure}" if failure else "."), actor.to_dict())
        self._save(driven)
        return LoopStep("done")

    def _completed_evaluation(
        self, driven: TrainingLoop | Experiment, evaluation_id: UUID | None, what: str, actor: Actor
    ) -> Evaluation | LoopStep:
        """The evaluation `driven` waits on once it completed; until then the step instead: wait while it is live,
        done when it ended otherwise (`driven` then fails: "<what> ended <status>")."""
        evaluation = self.get_evaluation(None, evaluation_id)
        if evaluation.state in EVALUATION_LIVE:
            return LoopStep("wait", evaluation.id)
        if evaluation.state != EVALUATION_COMPLETED:
            return self._fail_ended(driven, f"{what} ended {evaluation.status}", evaluation.failure, actor)
        return evaluation

    def _cancel_live_jobs(self, run_id: UUID | None, evaluation_ids: Iterable[UUID | None], actor: Actor) -> list[Any]:
        """Cancels the run and the evaluations that are still live, when a loop or an experiment is stopped;
        answers those it cancelled, to be saved with it."""
        cancelled: list[Any] = []
        if run_id is not None:
            run = self.get_run(None, run_id)
            if run.state in RUNNING:
                run.cancel(actor.to_dict())
                cancelled.append(run)
        for evaluation_id in evaluation_ids:
            if evaluation_id is not None:
                evaluation = self.get_evaluation(None, evaluation_id)
                if evaluation.state in EVALUATION_LIVE:
                    evaluation.cancel(actor.to_dict())
                    cancelled.append(evaluation)
        return cancelled
