"""The production layout on one machine: two web processes (one of them `verity serve --workers 2`, uvicorn's
process manager over two more) and two `verity worker` processes, on PostgreSQL and Redis. Three runs are
launched at once through the API of both; one web process and one worker are killed while the runs train; every run
ends Completed with each round recorded once, and the surviving web process answers /readyz and sums its
processes' metrics."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import httpx
import pytest

from domain.actors import Actor
from jobs.ledger import Ledger
from tests.e2e.conftest import (
    FAST,
    MATH_PAIRS,
    REPO_ROOT,
    TINY_ADVANCED,
    TINY_RL,
    _link_tiny_model,
    fast_env,
    free_port,
    start_worker,
    stop_worker,
)
from verity.config import Settings
from verity.wiring import build_application, ensure_default_organization

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
TESTER = Actor("person", "owner@localhost", "owner@localhost")
ROUNDS = 6  # long enough that a worker is caught mid-run, after its run's first checkpoint


def _environment(settings: Settings) -> dict[str, str]:
    pg = settings.postgres
    assert pg is not None
    return {**os.environ, **fast_env(FAST), "VERITY_DATA_DIR": str(settings.data_dir),
            "VERITY_BROKER_URL": settings.broker_url or "",
            "VERITY_DATABASE_URL": f"postgresql://{pg.user}@{pg.host}:{pg.port}/{pg.dbname}"}


def _serve(settings: Settings, port: int, log: Path, workers: int = 1) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "verity.cli", "serve", "--port", str(port), "--workers", str(workers)],
        cwd=REPO_ROOT, env=_environment(settings), stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _ready(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} never got ready:\n{log.read_text()[-3000:]}")


def _body(number: int) -> dict:
    return {"name": f"run {number}", "kind": "full", "training": {
        "objective": "rl", "rl": {**TINY_RL, "reward": MATH_PAIRS, "rounds": ROUNDS}, "advanced": TINY_ADVANCED}}


def test_two_web_processes_and_two_workers_lose_no_run_when_one_of_each_is_killed(
    postgres_settings: Settings, redis_url: str, tiny_model_dir: Path, tmp_path: Path,
) -> None:
    settings = Settings(data_dir=postgres_settings.data_dir, postgres=postgres_settings.postgres,
                        broker_url=redis_url)
    _link_tiny_model(settings, tiny_model_dir)
    managed, single = free_port(), free_port()
    children = [_serve(settings, managed, tmp_path / "web-managed.log", workers=2)]
    try:
        _ready(f"http://127.0.0.1:{managed}", children[0], tmp_path / "web-managed.log")
        # the second web process and the workers start together (the first one made the schema and the owner)
        children.append(_serve(settings, single, tmp_path / "web-single.log"))
        workers = [start_worker(settings, log_path=tmp_path / f"worker-{n}.log") for n in (1, 2)]
        children += workers
        _ready(f"http://127.0.0.1:{single}", children[1], tmp_path / "web-single.log")

        verity = build_application(settings)
        org_id, _ = ensure_default_organization(settings, verity)
        token = verity.issue_token(org_id, "several processes", "owner", TESTER, "owner").text
        clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                                timeout=30) for port in (managed, single)]
        run_ids = []
        for number in range(3):  # saved and launched through both web processes
            client = clients[number % 2]
            saved = client.post("/api/runs", json=_body(number))
            assert saved.status_code == 201, saved.text
            run_id = saved.json()["run"]["id"]
            assert client.post(f"/api/runs/{run_id}/launch").status_code == 200
            run_ids.append(UUID(run_id))

        def rounds_done() -> list[int]:
            return [verity.get_run(None, run_id).rounds_scored - 1 for run_id in run_ids]

        deadline = time.monotonic() + 120
        while not any(done >= 1 for done in rounds_done()):  # training has begun: a round is scored
            assert time.monotonic() < deadline, rounds_done()
            time.sleep(0.3)
        ledger = Ledger(settings)
        deadline = time.monotonic() + 60
        def resumable(lease) -> bool:  # training, past round 1's checkpoint, rounds still to go
            run = verity.get_run(None, lease.run_id)
            return run.state == "training" and 1 <= (run.last_round or 0) < ROUNDS - 1

        while not (held := [lease for lease in ledger.leases() if lease.pid in {w.pid for w in workers}
                            and resumable(lease)]):
            assert time.monotonic() < deadline, ledger.leases()
            time.sleep(0.2)
        victim = next(worker for worker in workers if worker.pid == held[0].pid)
        os.killpg(children[1].pid, signal.SIGKILL)  # the single web process goes, mid-run
        os.killpg(victim.pid, signal.SIGKILL)  # and a worker training a run, with its trainer

        deadline = time.monotonic() + 240
        while True:
            states = [clients[0].get(f"/api/runs/{run_id}").json()["state"] for run_id in run_ids]
            if all(state in ("completed", "failed", "cancelled") for state in states):
                break
            assert time.monotonic() < deadline, states
            time.sleep(1)

        assert states == ["completed"] * 3
        for run_id in run_ids:
            scored = [e.result["round_number"] for e in verity.repository.event_store.get(run_id)
                      if type(e).__name__ == "RoundScored"]
            assert scored == list(range(ROUNDS + 1)), (run_id, scored)  # each round once, none lost
        resumed = [type(e).__name__ for e in verity.repository.event_store.get(held[0].run_id)]
        assert "Resumed" in resumed  # the killed worker's run went on elsewhere from its last round
        assert clients[0].get("/readyz").json()["ready"] is True
        metrics = httpx.get(f"http://127.0.0.1:{managed}/-/metrics").text
        assert 'verity_runs{state="completed"} 3.0' in metrics
        assert "verity_http_requests_total{" in metrics  # summed over the manager's processes
    finally:
        for child in children:
            stop_worker(child, signal.SIGKILL)
