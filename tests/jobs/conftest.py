"""A Verity on the embedded default's stores, with the jobs' ledger, for tests that need no trainer."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

import pytest

from domain.actors import Actor
from domain.application import Verity
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from jobs.config import JobsConfig
from jobs.context import JobContext
from jobs.ledger import Ledger
from verity.config import Settings
from verity.wiring import build_application, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}
QUICK = JobsConfig(heartbeat_seconds=0.2, stale_after_seconds=2.0, reconcile_every_seconds=60.0)


@dataclass
class World:
    settings: Settings
    verity: Verity
    org_id: UUID
    project_id: UUID
    ctx: JobContext

    def launched(self, **rl: object) -> UUID:
        draft = run_body_from_api({"training": {"rl": {"reward": MATH_PAIRS, "rounds": 3, **rl}}})
        run_id = self.verity.save_run(self.org_id, self.project_id, draft, OWNER).id
        self.verity.launch_run(self.org_id, run_id, OWNER, "owner")
        return run_id

    def training(self) -> UUID:
        """A run a worker was training: Preparing, round 0 scored."""
        run_id = self.launched()
        self.verity.record_preparing(run_id)
        self.verity.record_round_scored(run_id, RoundResult(round_number=0, validation_reward=0.4))
        return run_id

    def finished(self, adapter: str) -> UUID:
        """A completed run of one round whose adapter the trainer saved at `adapter` (a merge's input)."""
        run_id = self.launched(rounds=1)
        self.verity.record_preparing(run_id)
        self.verity.record_round_scored(run_id, RoundResult(round_number=0, validation_reward=0.4))
        self.verity.record_round_scored(
            run_id, RoundResult(round_number=1, validation_reward=0.5, reward=0.5, signal=0.5, updated=True)
        )
        self.verity.record_saving_adapter(run_id)
        self.verity.record_adapter_ready(run_id, 1, adapter, "ab" * 32, 10)
        self.verity.record_completed(run_id)
        return run_id


@pytest.fixture
def world(sqlite_settings: Settings) -> World:
    verity = build_application(sqlite_settings)
    org_id, project_id = ensure_default_organization(sqlite_settings, verity)
    ctx = JobContext(sqlite_settings, verity, Ledger(sqlite_settings), QUICK)
    return World(sqlite_settings, verity, org_id, project_id, ctx)
