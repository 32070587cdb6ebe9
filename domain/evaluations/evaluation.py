"""The Evaluation aggregate: a model scored on test examples with a scoring and a main metric.

A public method checks; the `@event` method it calls only assigns (nothing is checked again on replay).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.lifecycle import Lifecycle
from domain.rewards.batch_failures import MetricFailures
from domain.state_events import failed_event, state_event

QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED = "queued", "running", "completed", "failed", "cancelled"
STATUS_NAMES = {
    QUEUED: "Queued",
    RUNNING: "Running",
    COMPLETED: "Completed",
    FAILED: "Failed",
    CANCELLED: "Cancelled",
}
LIVE = (QUEUED, RUNNING)


class Evaluation(Lifecycle, Aggregate):
    status_names = STATUS_NAMES
    live_states = LIVE
    fail_refusal = "Only a queued or running evaluation can fail: this one is {status}."

    @event("Created")
    def __init__(
        self,
        org_id: UUID,
        project_id: UUID,
        name: str,
        model: str,
        source: dict[str, Any],
        scoring: dict[str, Any],
        main_metric: str,
        adapter_run: UUID | None,
        adapter: dict[str, Any] | None,
        baseline_id: UUID | None,
        max_answer_tokens: int,
        actor: dict[str, str],
    ) -> None:
        self.org_id = org_id
        self.project_id = project_id
        self.name = name
        self.model = model
        self.source = source  # {"kind": "dataset_version", "id": ...} or {"kind": "benchmark", "name": ...}
        self.scoring = scoring
        self.main_metric = main_metric
        self.adapter_run = adapter_run  # None: the base model
        self.adapter = adapter  # the run's adapter as saved: location, sha256, size_bytes
        self.baseline_id = baseline_id  # Score against baseline: the evaluation it is compared with
        self.max_answer_tokens = max_answer_tokens
        self.state = QUEUED
        self.score: float | None = None
        self.breakdown: dict[str, float] = {}
        self.results: list[dict[str, Any]] = []
        self.metric_failures: dict[str, Any] | None = None  # a custom metric's failed batches, when any
        self.failure: str | None = None

    @property
    def is_baseline(self) -> bool:
        """The base model's evaluation: what a full run's default reward comes from."""
        return self.adapter_run is None

    def start(self, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "Only a queued evaluation can start: this one is {status}.")
        self._started(actor=actor)

    _started = state_event("Started", RUNNING)

    def complete(self, score: float, breakdown: dict[str, float], results: list[dict[str, Any]],
                 actor: dict[str, str], metric_failures: dict[str, Any] | None = None) -> None:
        """`metric_failures`: MetricFailures.to_dict() when the custom metric failed some batches, which then
        score 0; an evaluation whose metric failed on every answer fails instead (it has no score)."""
        self._require((RUNNING,), "Only a running evaluation can complete: this one is {status}.")
        if not 0.0 <= score <= 1.0:
            raise IllegalTransition(f"An evaluation's score is from 0 to 1, not {score}.")
        if metric_failures is not None:
            try:
                metric_failures = MetricFailures.from_dict(metric_failures).to_dict()
            except ValueError as problem:
                raise IllegalTransition(str(problem)) from None
        self._completed(score=float(score), breakdown=dict(breakdown), results=list(results), actor=actor,
                        metric_failures=metric_failures)

    @event("Completed")
    def _completed(self, score: float, breakdown: dict[str, float], results: list[dict[str, Any]],
                   actor: dict[str, str], metric_failures: dict[str, Any] | None = None) -> None:
        self.score = score
        self.breakdown = breakdown
        self.results = results
        self.metric_failures = metric_failures  # None in events recorded before metric failures were kept
        self.state = COMPLETED

    _failed = failed_event(FAILED)

    def cancel(self, actor: dict[str, str]) -> None:
        self._require(LIVE, "Only a queued or running evaluation can be cancelled: this one is {status}.")
        self._cancelled(actor=actor)

    _cancelled = state_event("Cancelled", CANCELLED)
