"""The TrainingLoop aggregate (001's "Automate rounds with a training loop"): each loop round is a full RL run that
starts from the previous best round's adapter, then an evaluation on the benchmark; a stop rule ends it.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.lifecycle import Lifecycle
from domain.loops import rules
from domain.runs.run_settings import RunSettings
from domain.runs.stored_settings import upcast_settings
from domain.state_events import failed_event, state_event

QUEUED, TRAINING, BENCHMARKING = "queued", "training", "benchmarking"
FAILED, STOPPED = "failed", "stopped"
STATUS_NAMES = {
    QUEUED: "Queued",
    TRAINING: "Training",
    BENCHMARKING: "Benchmarking",
    rules.TARGET_REACHED: "Target reached",
    rules.ROUNDS_SPENT: "Rounds spent",
    rules.PLATEAUED: "Plateaued",
    FAILED: "Failed",
    STOPPED: "Stopped",
}
LIVE = (QUEUED, TRAINING, BENCHMARKING)
SCORE_COLUMNS = {
    "accuracy": "Accuracy",
    "accuracy_strict": "Accuracy strict",
    "format": "Format",
    "answered": "Answered",
    "score": "Score",
}


class TrainingLoop(Lifecycle, Aggregate):
    status_names = STATUS_NAMES
    live_states = LIVE
    fail_refusal = "Only a live loop can fail: this one is {status}."

    class Created(Aggregate.Created):
        org_id: UUID
        project_id: UUID
        name: str
        benchmark: str
        benchmark_size: int
        score_column: str
        target: float
        max_rounds: int
        give_up_after: int
        reclaim_storage: bool
        run_settings: RunSettings
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
        benchmark: str,
        benchmark_size: int,
        score_column: str,
        target: float,
        max_rounds: int,
        give_up_after: int,
        reclaim_storage: bool,
        run_settings: RunSettings,
        actor: dict[str, str],
    ) -> None:
        self.org_id = org_id
        self.project_id = project_id
        self.name = name
        self.benchmark = benchmark
        self.benchmark_size = benchmark_size
        self.score_column = score_column
        self.target = target  # a share in [0, 1]; the page shows it as a percent
        self.max_rounds = max_rounds
        self.give_up_after = give_up_after
        self.reclaim_storage = reclaim_storage
        self.run_settings = run_settings  # the RL settings every round's run takes
        self.state = QUEUED
        self.rounds: list[dict[str, Any]] = []  # {number, run_id, evaluation_id, score}
        self.failure: str | None = None

    # --- reading -------------------------------------------------------------------------------------------
    @property
    def scores(self) -> list[float]:
        return [r["score"] for r in self.rounds if r.get("score") is not None]

    @property
    def best_round(self) -> int | None:
        return rules.best_round([r.get("score") for r in self.rounds])

    @property
    def current(self) -> dict[str, Any] | None:
        return self.rounds[-1] if self.rounds else None

    # --- steps the jobs record -----------------------------------------------------------------------------
    def start_round(self, run_id: UUID, actor: dict[str, str]) -> None:
        self._require((QUEUED, BENCHMARKING), "A loop starts a round when queued or after a benchmark: it is {status}.")
        if self.current is not None and self.current.get("score") is None:
            raise IllegalTransition(f"Round {self.current['number']} is not scored yet.")
        if len(self.rounds) >= self.max_rounds:
            raise IllegalTransition(f"This loop has {self.max_rounds} rounds at most.")
        self._round_started(number=len(self.rounds) + 1, run_id=run_id, actor=actor)

    @event("RoundStarted")
    def _round_started(self, number: int, run_id: UUID, actor: dict[str, str]) -> None:
        self.rounds.append({"number": number, "run_id": run_id, "evaluation_id": None, "score": None})
        self.state = TRAINING

    def benchmark_round(self, evaluation_id: UUID, actor: dict[str, str]) -> None:
        self._require((TRAINING,), "Only a training loop can benchmark its round: it is {status}.")
        self._benchmarking(number=len(self.rounds), evaluation_id=evaluation_id, actor=actor)

    @event("Benchmarking")
    def _benchmarking(self, number: int, evaluation_id: UUID, actor: dict[str, str]) -> None:
        self.rounds[-1] = {**self.rounds[-1], "evaluation_id": evaluation_id}
        self.state = BENCHMARKING

    def score_round(self, score: float, actor: dict[str, str]) -> None:
        """Records the round's benchmark score, then ends the loop when a stop rule says so."""
        self._require((BENCHMARKING,), "Only a benchmarking loop can score its round: it is {status}.")
        if self.current is None or self.current.get("score") is not None:
            raise IllegalTransition("This loop's round is already scored.")
        scores = [*self.scores, float(score)]
        ending = rules.decide(scores, self.target, self.max_rounds, self.give_up_after)
        self._round_scored(
            number=len(self.rounds), score=float(score), best_round=rules.best_round(scores), actor=actor
        )
        if ending is not None:
            self._ended(status=ending, actor=actor)

    @event("RoundScored")
    def _round_scored(self, number: int, score: float, best_round: int | None, actor: dict[str, str]) -> None:
        self.rounds[-1] = {**self.rounds[-1], "score": score}

    @event("Ended")
    def _ended(self, status: str, actor: dict[str, str]) -> None:
        self.state = status

    _failed = failed_event(FAILED)

    def stop(self, actor: dict[str, str]) -> None:
        self._require(LIVE, "Only a queued, training or benchmarking loop can be stopped: this one is {status}.")
        self._stopped(actor=actor)

    _stopped = state_event("Stopped", STOPPED)
