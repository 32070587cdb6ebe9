"""The Rescoring aggregate: stored answers scored again with another reward (issue 22).

Saved (queued) → Scoring → Scored (a small summary; the answers, old and new score, go to a file of their own in
the organization's storage) or Failed (in words). The source's answers are read, never edited. A public method
checks; the `@event` method it calls only assigns.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.lifecycle import Lifecycle
from domain.rescorings.summary import checked_summary
from domain.state_events import failed_event, state_event

QUEUED, SCORING, SCORED, FAILED = "queued", "scoring", "scored", "failed"
STATUS_NAMES = {QUEUED: "Queued", SCORING: "Scoring", SCORED: "Scored", FAILED: "Failed"}
LIVE = (QUEUED, SCORING)


class Rescoring(Lifecycle, Aggregate):
    status_names = STATUS_NAMES
    live_states = LIVE
    fail_refusal = "Only a queued or scoring re-scoring can fail: this one is {status}."

    @event("Saved")
    def __init__(
        self,
        org_id: UUID,
        project_id: UUID,
        name: str,
        source: dict[str, Any],
        old_reward: dict[str, Any],
        reward: dict[str, Any],
        rounds: list[int],
        actor: dict[str, str],
    ) -> None:
        self.org_id = org_id
        self.project_id = project_id
        self.name = name
        self.source = source  # {"kind": "run" | "probe", "id": ..., "name": ...}
        self.old_reward = old_reward  # the reward the stored answers were scored with
        self.reward = reward  # the other reward: full and canonical, as a run saves it
        self.rounds = rounds  # the source's rounds whose answers it reads (a probe's answers are its round 1)
        self.state = QUEUED
        self.summary: dict[str, Any] | None = None
        self.failure: str | None = None

    def start(self, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "Only a queued re-scoring can start scoring: this one is {status}.")
        self._scoring(actor=actor)

    _scoring = state_event("Scoring", SCORING)

    def score(self, summary: dict[str, Any], actor: dict[str, str]) -> None:
        self._require((SCORING,), "Only a scoring re-scoring can be scored: this one is {status}.")
        try:
            summary = checked_summary(summary, self.rounds)
        except ValueError as problem:
            raise IllegalTransition(str(problem)) from None
        self._scored(summary=summary, actor=actor)

    @event("Scored")
    def _scored(self, summary: dict[str, Any], actor: dict[str, str]) -> None:
        self.summary = summary
        self.state = SCORED

    _failed = failed_event(FAILED)
