"""The Probe aggregate: a reward tried once on a few prompts' sampled answers (issue 22).

Saved (queued) → Sampling → Scored (a small summary; the answers go to a file in the organization's storage) or
Failed (in words); a queued or sampling probe may be Cancelled (its event names who). A public method checks; the
`@event` method it calls only assigns.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.lifecycle import Lifecycle
from domain.probes.summary import checked_summary
from domain.state_events import failed_event, state_event

QUEUED, SAMPLING, SCORED, FAILED, CANCELLED = "queued", "sampling", "scored", "failed", "cancelled"
STATUS_NAMES = {QUEUED: "Queued", SAMPLING: "Sampling", SCORED: "Scored", FAILED: "Failed", CANCELLED: "Cancelled"}
LIVE = (QUEUED, SAMPLING)


class Probe(Lifecycle, Aggregate):
    status_names = STATUS_NAMES
    live_states = LIVE
    fail_refusal = "Only a queued or sampling probe can fail: this one is {status}."

    @event("Saved")
    def __init__(
        self,
        org_id: UUID,
        project_id: UUID,
        name: str,
        model: str,
        source: dict[str, Any],
        reward: dict[str, Any],
        adapter_run: UUID | None,
        adapter: dict[str, Any] | None,
        prompts: int,
        answers_per_prompt: int,
        max_answer_tokens: int,
        seed: int,
        actor: dict[str, str],
    ) -> None:
        self.org_id = org_id
        self.project_id = project_id
        self.name = name
        self.model = model
        self.source = source  # {"kind": "math_pairs"} or {"kind": "dataset_version", "id": ..., "label": ...}
        self.reward = reward  # a full, canonical reward, as a run saves it
        self.adapter_run = adapter_run  # None: the base model
        self.adapter = adapter  # the run's adapter as saved: location, sha256, size_bytes
        self.prompts = prompts
        self.answers_per_prompt = answers_per_prompt
        self.max_answer_tokens = max_answer_tokens
        self.seed = seed
        self.state = QUEUED
        self.summary: dict[str, Any] | None = None
        self.failure: str | None = None

    def start(self, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "Only a queued probe can start sampling: this one is {status}.")
        self._sampling(actor=actor)

    _sampling = state_event("Sampling", SAMPLING)

    def score(self, summary: dict[str, Any], actor: dict[str, str]) -> None:
        self._require((SAMPLING,), "Only a sampling probe can be scored: this one is {status}.")
        try:
            summary = checked_summary(summary, self.prompts, self.answers_per_prompt)
        except ValueError as problem:
            raise IllegalTransition(str(problem)) from None
        self._scored(summary=summary, actor=actor)

    @event("Scored")
    def _scored(self, summary: dict[str, Any], actor: dict[str, str]) -> None:
        self.summary = summary
        self.state = SCORED

    _failed = failed_event(FAILED)

    def cancel(self, actor: dict[str, str]) -> None:
        self._require(LIVE, "Only a queued or sampling probe can be cancelled: this one is {status}.")
        self._cancelled(actor=actor)

    _cancelled = state_event("Cancelled", CANCELLED)
