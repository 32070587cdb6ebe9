"""The read models' test bed: the same cases on SQLite files and on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from consoles import default_organization
from rounds import scored_round

from domain.actors import Actor
from domain.application import Verity
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from projections.store import TableReadModels
from verity.config import Settings

OWNER = Actor("person", "owner@localhost", "owner@localhost")


@dataclass
class Stack:
    settings: Settings
    verity: Verity
    read_models: TableReadModels
    runner: ProjectionRunner
    org_id: UUID
    project_id: UUID

    def save(self, name: str = "math", kind: str = "full", rounds: int = 20) -> UUID:
        body = {
            "name": name,
            "kind": kind,
            "training": {
                "rl": {"rounds": rounds, "reward": {"preset": "verifiable", "metric": "math_pairs"}}
            },
        }
        return self.verity.save_run(self.org_id, self.project_id, run_body_from_api(body), OWNER).id


def round_result(number: int, validation: float) -> RoundResult:
    return scored_round(
        number,
        validation,
        reward=0.41,
        metric_failures=number % 2,
        updated=number % 3 != 0,
        mean_answer_tokens=120.5,
        token_entropy=0.8,
        peak_memory_bytes=2**30,
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request) -> Settings:
    return request.getfixturevalue(f"{request.param}_settings")


@pytest.fixture
def stack(settings) -> Iterator[Stack]:
    verity, read_models, org_id, project_id = default_organization(settings)
    runner = ProjectionRunner(verity, read_models)
    yield Stack(settings, verity, read_models, runner, org_id, project_id)
    runner.stop()
    close = getattr(read_models.tables, "close", None)
    if close is not None:
        close()
    verity.close()


@pytest.fixture(name="round_result")
def round_result_fixture():
    return round_result
