"""The broker restarting while a run trains: Redis comes back (from its append-only file), the worker reconnects,
the run finishes and is acknowledged, and a run launched afterwards reaches the worker too."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis

if TYPE_CHECKING:
    from conftest import Site

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


class RedisServer:
    """A redis-server of the test's own, with an append-only file, so it can be restarted like a real broker."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder, self.port = folder, port
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--dir", str(self.folder), "--appendonly", "yes",
             "--save", "", "--bind", "127.0.0.1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # redis writes its append-only file and exits
            self.process.wait(timeout=10)


def test_the_broker_restarting_while_a_run_trains_loses_nothing(production: Site, broker_server) -> None:
    run_id = production.save(rounds=6)
    production.launch(run_id)
    production.wait_training(run_id, round_number=1)

    broker_server.stop()
    time.sleep(1.0)
    broker_server.start()

    run = production.wait_ended(run_id, timeout=90)
    assert run["state"] == "completed", run.get("failure")
    trial_id = production.save(kind="trial")
    production.launch(trial_id)  # after the restart, a new launch reaches the worker too
    assert production.wait_ended(trial_id, timeout=90)["state"] == "completed"


@pytest.fixture
def broker_server(tmp_path: Path) -> Iterator[RedisServer]:
    """This module's broker: a redis-server on a port of its own (the machine's Redis is never restarted)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder, port)
    server.start()
    yield server
    server.stop()
