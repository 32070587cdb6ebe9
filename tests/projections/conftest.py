"""The read models' test bed: the same cases on SQLite files and on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest

from domain.actors import Actor
from domain.application import Verity
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from projections.store import TableReadModels
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

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
    if number == 0:
        return RoundResult(0, validation, validation_seconds=9.5)
    return RoundResult(
        number,
        validation,
        reward=0.41,
        signal=0.62,
        cut_off=0.02,
        metric_failures=number % 2,
        updated=number % 3 != 0,
        loss=0.012,
        sampling_seconds=81.2,
        grading_seconds=2.1,
        update_seconds=64.0,
        validation_seconds=9.5,
        mean_answer_tokens=120.5,
        token_entropy=0.8,
        peak_memory_bytes=2**30,
    )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request) -> Settings:
    return request.getfixturevalue(f"{request.param}_settings")


@pytest.fixture
def stack(settings) -> Iterator[Stack]:
    verity = build_application(settings)
    read_models = build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
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


@pytest.fixture
def owner() -> Actor:
    return OWNER
