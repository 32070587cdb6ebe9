"""A console over a real event store and read models, on SQLite or PostgreSQL, driven by the test client."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from consoles import ClientConsole, Served, client_console, served_console
from rounds import scored_round

from domain.actors import Actor
from verity.config import Settings

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}


@dataclass
class Console(ClientConsole):
    """The console under test, and the Verity application the jobs would drive."""

    launched: list[UUID]

    @staticmethod
    def rl_body(**rl: object) -> dict:
        """An API body as the documents give it, with a Math Pairs reward (no dataset needed)."""
        training = {"objective": "rl", "method": "lora", "gpu_count": 1, "rl": {"reward": MATH_PAIRS, **rl}}
        return {"name": "math pairs", "training": training}

    @staticmethod
    def verity_actor() -> Actor:
        return OWNER

    def feed_position(self) -> int:
        self.settle()
        page = self.client.get("/api/events", params={"after": 0, "limit": 1000}).json()
        return page["next_after"]

    def score_round(self, run_id: UUID, number: int, reward: float | None, validation: float) -> None:
        """A round as the trainer reports it (round 0 with no `reward`), recorded the way the jobs will record it."""
        self.verity.record_round_scored(run_id, scored_round(number, validation, reward=reward, graded_answers=128))


def _console(settings: Settings) -> Iterator[Console]:
    launched: list[UUID] = []
    with client_console(settings, Console, {"launch": launched.append}, launched=launched) as console:
        yield console


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def console(request: pytest.FixtureRequest) -> Iterator[Console]:
    """The console on the embedded default (SQLite) and on PostgreSQL."""
    settings = request.getfixturevalue(f"{request.param}_settings")
    yield from _console(settings)


@pytest.fixture
def sqlite_console(sqlite_settings: Settings) -> Iterator[Console]:
    """The console on SQLite only, for checks of the pages' look that don't depend on the store."""
    yield from _console(sqlite_settings)


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:
    """`verity serve` in its own process on a free port, with its first owner's password (from
    DATA_DIR/first-owner.txt) and an owner's API token made with `verity token create`."""
    with served_console(tmp_path / "data") as console:
        yield console
