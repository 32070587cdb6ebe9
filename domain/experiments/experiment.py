"""The Experiment aggregate (000's "In an experiment"): it measures the base model on test examples, trains an RL
run whose reward is by default the evaluation's main metric (or reuses a finished run's adapter and trains
nothing), evaluates the adapter on the same examples and compares the two.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.lifecycle import Lifecycle
from domain.runs.run_settings import RunSettings
from domain.runs.stored_settings import upcast_settings
from domain.state_events import failed_event, state_event

QUEUED, MEASURING, TRAINING, EVALUATING = "queued", "measuring", "training", "evaluating"
COMPLETED, FAILED, STOPPED = "completed", "failed", "stopped"
STATUS_NAMES = {
    QUEUED: "Queued",
    MEASURING: "Measuring the base model",
    TRAINING: "Training",
    EVALUATING: "Evaluating the adapter",
    COMPLETED: "Completed",
    FAILED: "Failed",
    STOPPED: "Stopped",
}
LIVE = (QUEUED, MEASURING, TRAINING, EVALUATING)


class Experiment(Lifecycle, Aggregate):
    status_names = STATUS_NAMES
    live_states = LIVE
    fail_refusal = "Only a live experiment can fail: this one is {status}."

    class Created(Aggregate.Created):
        org_id: UUID
        project_id: UUID
        name: str
        source: dict[str, Any]
        scoring: dict[str, Any]
        main_metric: str
        max_answer_tokens: int
        reward: dict[str, Any] | None
        reward_is_main_metric: bool
        run_settings: RunSettings | None
        reused_run: UUID | None
        baseline_id: UUID | None
        actor: dict[str, str]
        class_version = 2  # version 1 held the run settings as the API body: see domain/runs/stored_settings.py

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            upcast_settings(state, "run_settings")

    @event(Created)
    def __init__(
        self,
        org_id: UUID,
        project_id: UUID,
        name: str,
        source: dict[str, Any],
        scoring: dict[str, Any],
        main_metric: str,
        max_answer_tokens: int,
        reward: dict[str, Any] | None,
        reward_is_main_metric: bool,
        run_settings: RunSettings | None,
        reused_run: UUID | None,
        baseline_id: UUID | None,
        actor: dict[str, str],
    ) -> None:
        self.org_id = org_id
        self.project_id = project_id
        self.name = name
        self.source = source
        self.scoring = scoring
        self.main_metric = main_metric
        self.max_answer_tokens = max_answer_tokens
        self.reward = reward  # None when the experiment reuses an adapter and trains nothing
        self.reward_is_main_metric = reward_is_main_metric
        self.run_settings = run_settings  # the RL run's settings, None when reusing
        self.reused_run = reused_run
        self.baseline_id = baseline_id  # the base model's evaluation: reused, or the one the experiment made
        self.run_id: UUID | None = reused_run
        self.evaluation_id: UUID | None = None  # the adapter's evaluation
        self.training_ended: str | None = None  # how the run ended, such as "Completed" or "Stopped on time"
        self.state = QUEUED
        self.failure: str | None = None
        self.base_score: float | None = None
        self.adapter_score: float | None = None

    @property
    def trains(self) -> bool:
        return self.reused_run is None

    @property
    def difference(self) -> float | None:
        if self.base_score is None or self.adapter_score is None:
            return None
        return self.adapter_score - self.base_score

    # --- steps the jobs record -----------------------------------------------------------------------------
    def measure(self, evaluation_id: UUID, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "An experiment measures the base model when queued: it is {status}.")
        self._measuring(evaluation_id=evaluation_id, actor=actor)

    @event("Measuring")
    def _measuring(self, evaluation_id: UUID, actor: dict[str, str]) -> None:
        self.baseline_id = evaluation_id
        self.state = MEASURING

    def base_measured(self, score: float, actor: dict[str, str]) -> None:
        self._require((QUEUED, MEASURING), "The base model is measured once: the experiment is {status}.")
        self._base_measured(score=float(score), actor=actor)

    @event("BaseMeasured")
    def _base_measured(self, score: float, actor: dict[str, str]) -> None:
        self.base_score = score

    def train(self, run_id: UUID, actor: dict[str, str]) -> None:
        self._require((QUEUED, MEASURING), "An experiment trains after measuring the base model: it is {status}.")
        if not self.trains:
            raise IllegalTransition("This experiment reuses an adapter and trains nothing.")
        self._training(run_id=run_id, actor=actor)

    @event("Training")
    def _training(self, run_id: UUID, actor: dict[str, str]) -> None:
        self.run_id = run_id
        self.state = TRAINING

    def evaluate_adapter(self, evaluation_id: UUID, training_ended: str | None, actor: dict[str, str]) -> None:
        self._require((QUEUED, MEASURING, TRAINING), "An experiment evaluates its adapter once: it is {status}.")
        self._evaluating(evaluation_id=evaluation_id, training_ended=training_ended, actor=actor)

    @event("Evaluating")
    def _evaluating(self, evaluation_id: UUID, training_ended: str | None, actor: dict[str, str]) -> None:
        self.evaluation_id = evaluation_id
        self.training_ended = training_ended
        self.state = EVALUATING

    def complete(self, adapter_score: float, actor: dict[str, str]) -> None:
        self._require((EVALUATING,), "Only an experiment evaluating its adapter can complete: it is {status}.")
        self._completed(adapter_score=float(adapter_score), actor=actor)

    @event("Completed")
    def _completed(self, adapter_score: float, actor: dict[str, str]) -> None:
        self.adapter_score = adapter_score
        self.state = COMPLETED

    _failed = failed_event(FAILED)

    def stop(self, actor: dict[str, str]) -> None:
        self._require(LIVE, "Only a live experiment can be stopped: this one is {status}.")
        self._stopped(actor=actor)

    _stopped = state_event("Stopped", STOPPED)
