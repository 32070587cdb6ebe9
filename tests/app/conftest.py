"""A console over a real event store and read models, on SQLite or PostgreSQL, driven by the test client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import httpx
import pytest
from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from domain.actors import Actor
from domain.application import Verity
from domain.runs.progress import RoundResult
from projections.runner import ProjectionRunner
from projections.store import ReadModels
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}


@dataclass
class Console:
    """The console under test, and the Verity application the jobs would drive."""

    client: TestClient
    verity: Verity
    read_models: ReadModels
    org_id: UUID
    project_id: UUID
    launched: list[UUID]

    def settle(self, position: int | None = None) -> None:
        """Wait until the read models show everything written so far (the runner follows in background)."""
        target = position if position is not None else self.verity.recorder.max_notification_id() or 0
        assert self.read_models.wait_for(target, timeout=10), "the read models did not catch up"

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
        """A round as the trainer reports it, recorded the way the jobs will record it."""
        result = RoundResult(
            round_number=number,
            validation_reward=validation,
            reward=reward,
            signal=None if number == 0 else 0.62,
            cut_off=None if number == 0 else 0.02,
            graded_answers=0 if number == 0 else 128,
            updated=number > 0,
            loss=None if number == 0 else 0.012,
            sampling_seconds=0.0 if number == 0 else 81.2,
            grading_seconds=0.0 if number == 0 else 2.1,
            update_seconds=0.0 if number == 0 else 64.0,
            validation_seconds=9.5,
        )
        self.verity.record_round_scored(run_id, result)


def _console(settings: Settings) -> Iterator[Console]:
    verity = build_application(settings)
    read_models = build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    launched: list[UUID] = []
    app = create_app(verity, read_models, runner=runner, launcher=launched.append, debug=True)
    with TestClient(app) as client:
        sign_in_as(client, verity, read_models, org_id)  # the owner of Default, signed in with a session
        yield Console(client, verity, read_models, org_id, project_id, launched)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def console(request: pytest.FixtureRequest) -> Iterator[Console]:
    """The console on the embedded default (SQLite) and on PostgreSQL."""
    settings = request.getfixturevalue(f"{request.param}_settings")
    yield from _console(settings)


@pytest.fixture
def sqlite_console(sqlite_settings: Settings) -> Iterator[Console]:
    """The console on SQLite only, for checks of the pages' look that don't depend on the store."""
    yield from _console(sqlite_settings)


@dataclass
class Served:
    """`verity serve` running in its own process on a free port, with its first owner's password (from
    DATA_DIR/first-owner.txt) and an owner's API token made with `verity token create`."""

    url: str
    process: subprocess.Popen
    email: str = ""
    password: str = ""
    token: str = ""

    @property
    def api(self) -> dict[str, str]:
        """Headers for the JSON API as a script calls it."""
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "VERITY_DATA_DIR": str(tmp_path / "data")}
    env.pop("VERITY_DATABASE_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "verity.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/sign-in", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"verity serve did not start: {process.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        first_owner = dict(
            line.split(": ", 1) for line in (tmp_path / "data" / "first-owner.txt").read_text().splitlines()
        )
        token = subprocess.run(
            [sys.executable, "-m", "verity.cli", "token", "create", "--name", "tests", "--role", "owner"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        yield Served(url, process, first_owner["email"], first_owner["password"], token)
    finally:
        process.terminate()
        process.wait(timeout=10)
