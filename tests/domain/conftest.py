"""Helpers for the domain stories: an in-memory Verity, an organization with a project, runs in each state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from rounds import TINY_MODEL_ROUND, scored_round

from domain.actors import Actor
from domain.application import Verity
from domain.runs.progress import RoundResult
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def body(**rl: Any) -> dict[str, Any]:
    return {"name": "math", "training": {"rl": {"reward": MATH_PAIRS, **rl}}}


def draft(kind: str = "full", **rl: Any) -> RunSettings:
    return run_body_from_api({**body(**rl), "kind": kind})


def scored(number: int, validation: float, *, signal: float = 0.5, reward: float = 0.4) -> RoundResult:
    """A round of the tiny model; one with no `signal` scored every answer `reward` (and made no update)."""
    return scored_round(
        number,
        validation,
        TINY_MODEL_ROUND,
        reward=reward,
        signal=signal,
        updated=signal > 0,
        uniform_value=reward if signal == 0 else None,
    )


@dataclass
class World:
    verity: Verity
    org_id: UUID
    project_id: UUID

    def saved(self, kind: str = "full", **rl: Any) -> UUID:
        return self.verity.save_run(self.org_id, self.project_id, draft(kind, **rl), OWNER).id

    def launched(self, kind: str = "full", **rl: Any) -> UUID:
        run_id = self.saved(kind, **rl)
        self.verity.launch_run(self.org_id, run_id, OWNER, "member")
        return run_id

    def training(self, kind: str = "full", rounds_scored: int = 1, **rl: Any) -> UUID:
        """A run that scored round 0 and then rounds 1..rounds_scored-1."""
        run_id = self.launched(kind, **rl)
        self.verity.record_preparing(run_id)
        for number in range(rounds_scored):
            self.verity.record_round_scored(run_id, scored(number, 0.3 + 0.05 * number))
        return run_id

    def adapter_ready(self, **rl: Any) -> UUID:
        run_id = self.training(rounds=2, rounds_scored=3, **rl)
        self.verity.record_saving_adapter(run_id)
        run = self.verity.get_run(self.org_id, run_id)
        self.verity.record_adapter_ready(run_id, run.best_round, f"runs/{run_id}/adapter", "ab" * 32, 1234)
        return run_id


def new_world(plan: str = "pro", vision: bool = False) -> World:
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    org_id = verity.create_organization("Acme", plan, OWNER).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, vision, OWNER).id
    return World(verity, org_id, project_id)


@pytest.fixture
def world() -> World:
    return new_world()


@pytest.fixture
def make_world():
    return new_world


@pytest.fixture(name="draft")
def draft_fixture():
    return draft


@pytest.fixture(name="scored")
def scored_fixture():
    return scored
