"""A whole Verity on this machine, driven through its API: the console app, the projections, the jobs and real
trainer processes on the tiny model. On the embedded default (SQLite, in-process worker, storage folder) or in
production shape (PostgreSQL, Redis, a separate `verity worker` process, S3 over HTTP on a moto server)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from litestar.testing import TestClient

from app.factory import create_app
from app.shell.jobs import JOBS
from domain.actors import Actor
from jobs.config import JobsConfig
from jobs.service import JobsHandle, start
from migrations import apply_migrations
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

TESTER = Actor("person", "owner@localhost", "owner@localhost")
REPO_ROOT = Path(__file__).resolve().parents[2]
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": False}
# Fast on a loaded 2-core CPU; the tiny model learns at 3e-4 to 5e-4 (the product's 5e-6 is for real models).
TINY_RL = {"prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16, "reward": MATH_PAIRS}
TINY_ADVANCED = {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128}
FAST = JobsConfig(
    heartbeat_seconds=0.5,
    stale_after_seconds=4.0,
    reconcile_every_seconds=1.0,
    cancel_poll_seconds=0.5,
    watchdog_grace_seconds=5.0,
    terminate_grace_seconds=3.0,
    requeue_after_seconds=30.0,
)
ENDED = ("adapter_ready", "completed", "failed", "cancelled")


def fast_env(config: JobsConfig = FAST) -> dict[str, str]:
    """The same timings for a `verity worker` process, through its environment."""
    return {
        "VERITY_HEARTBEAT_SECONDS": str(config.heartbeat_seconds),
        "VERITY_STALE_AFTER_SECONDS": str(config.stale_after_seconds),
        "VERITY_RECONCILE_EVERY_SECONDS": str(config.reconcile_every_seconds),
        "VERITY_CANCEL_POLL_SECONDS": str(config.cancel_poll_seconds),
        "VERITY_WATCHDOG_GRACE_SECONDS": str(config.watchdog_grace_seconds),
        "VERITY_TERMINATE_GRACE_SECONDS": str(config.terminate_grace_seconds),
        "VERITY_TIME_LIMIT_SCALE": str(config.time_limit_scale),
    }



def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Site:
    """The console, its jobs and its data, seen as a user of the API sees them."""

    settings: Settings
    client: TestClient
    handle: JobsHandle
    app_verity: Any
    read_models: Any
    children: list[subprocess.Popen] = field(default_factory=list)

    def save(self, *, kind: str = "full", rounds: int = 2, time_limit_hours: float = 2.0, **rl: Any) -> UUID:
        advanced = {**TINY_ADVANCED, **rl.pop("advanced", {})}
        body = {
            "name": f"{kind} on the tiny model",
            "kind": kind,
            "dataset_version": rl.pop("dataset_version", None),
            "training": {
                "objective": "rl",
                "method": "lora",
                "gpu_count": 1,
                "time_limit_hours": time_limit_hours,
                "rl": {**TINY_RL, "rounds": rounds, **rl},
                "advanced": advanced,
            },
        }
        answer = self.client.post("/api/runs", json=body)
        assert answer.status_code == 201, answer.text
        return UUID(answer.json()["run"]["id"])

    def launch(self, run_id: UUID) -> dict:
        answer = self.client.post(f"/api/runs/{run_id}/launch")
        assert answer.status_code == 200, answer.text
        return answer.json()["run"]

    def run(self, run_id: UUID) -> dict:
        self.read_models.wait_for(self.app_verity.recorder.max_notification_id() or 0, timeout=10)
        return self.client.get(f"/api/runs/{run_id}").json()

    def add_worker(self, log_path: Path) -> None:
        """One more separate `verity worker` process (a second GPU machine), stopped with the site."""
        self.children.append(start_worker(self.settings, log_path=log_path))

    def timeline(self, run_id: UUID) -> list[dict]:
        self.read_models.wait_for(self.app_verity.recorder.max_notification_id() or 0, timeout=10)
        return self.client.get(f"/api/runs/{run_id}/events").json()

    def wait(self, run_id: UUID, until: Callable[[dict], bool], timeout: float = 120) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = self.run(run_id)
            if until(run):
                return run
            time.sleep(0.3)
        run = self.run(run_id)
        raise AssertionError(f"run {run_id} never got there; it is {run['status_line']}: {run.get('failure')}")

    @staticmethod
    def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        return eventually(condition, timeout)

    def upload(self, name: str, train: bytes, validation: bytes, token: str | None = None) -> str:
        """A dataset version through a console that has the site's storage folder (the site's own serves none);
        as the site's owner, or as the holder of `token`. Returns the version's id."""
        from verity.storage import open_storage

        console = create_app(self.app_verity, self.read_models, storage=open_storage(self.settings))
        with TestClient(console) as client:
            client.headers["Authorization"] = f"Bearer {token}" if token else self.client.headers["Authorization"]
            dataset = client.post("/api/datasets", json={"name": name})
            assert dataset.status_code == 201, dataset.text
            files = {"train": ("train.jsonl", train, "application/jsonl"),
                     "validation": ("validation.jsonl", validation, "application/jsonl")}
            version = client.post(f"/api/datasets/{dataset.json()['id']}/versions", files=files)
        assert version.status_code == 201, version.text
        return version.json()["id"]

    def wait_ended(self, run_id: UUID, timeout: float = 150) -> dict:
        """Until the run's ending is whole: a full run that did all its rounds is Adapter ready for a moment
        before it is Completed; one that stopped early stays Adapter ready."""

        def ended(run: dict) -> bool:
            return run["state"] in ENDED and (run["state"] != "adapter_ready" or run["stop_reason"] is not None)

        return self.wait(run_id, ended, timeout)

    def wait_training(self, run_id: UUID, round_number: int = 1, timeout: float = 90) -> dict:
        """Until the run is inside round `round_number` (the previous round is scored)."""
        def inside(run: dict) -> bool:
            if run["state"] in ENDED:
                raise AssertionError(f"run {run_id} ended first: {run['status_line']}: {run.get('failure')}")
            scored_round_0 = run["best_round"] is not None
            return run["state"] == "training" and scored_round_0 and run["rounds_done"] >= round_number - 1

        return self.wait(run_id, inside, timeout)

    def training_run(self, rounds: int, round_number: int = 1) -> UUID:
        """A run of `rounds` rounds, saved, launched and inside round `round_number`."""
        run_id = self.save(rounds=rounds)
        self.launch(run_id)
        self.wait_training(run_id, round_number=round_number)
        return run_id


def _serve(settings: Settings, config: JobsConfig, on_child=None) -> Iterator[Site]:
    apply_migrations(settings)
    verity = build_application(settings)
    read_models = build_read_models(settings, migrate=False)
    org_id, _ = ensure_default_organization(settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    handle = start(settings, verity, read_models, config=config, on_child=on_child)
    app = create_app(verity, read_models, runner=runner)
    app.state[JOBS] = handle  # as `verity serve` wires it: the jobs follow the log, the console only records
    with TestClient(app) as client:
        if hasattr(verity, "issue_token"):  # the API as a script uses it: with an owner's token
            issued = verity.issue_token(org_id, "end-to-end tests", "owner", TESTER, "owner")
            client.headers["Authorization"] = f"Bearer {issued.text}"
        site = Site(settings, client, handle, verity, read_models)
        try:
            yield site
        finally:
            handle.stop()
            for child in site.children:
                if child.poll() is None:
                    child.kill()


def _link_tiny_model(settings: Settings, tiny_model_dir: Path) -> None:
    """The Demo project trains the model at settings.tiny_model_dir: point it at the cached build."""
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    if not settings.tiny_model_dir.exists():
        settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)


@pytest.fixture
def trainer_children() -> list[subprocess.Popen]:
    """Every trainer process the in-process worker starts, so a test can pause or kill one."""
    return []


@pytest.fixture
def jobs_config() -> JobsConfig:
    """The jobs' timings; a test module overrides this fixture to shrink its Time limits."""
    return FAST


@pytest.fixture
def embedded(sqlite_settings: Settings, tiny_model_dir: Path, trainer_children, jobs_config) -> Iterator[Site]:
    """The embedded default: SQLite, the in-process worker on an in-memory broker, storage in the data folder."""
    _link_tiny_model(sqlite_settings, tiny_model_dir)
    yield from _serve(sqlite_settings, jobs_config, on_child=trainer_children.append)


@pytest.fixture
def embedded_outside_tmp(tiny_model_dir: Path, jobs_config) -> Iterator[Site]:
    """The embedded default with its data folder outside /tmp (as the default ./data is), in /var/tmp."""
    folder = Path(tempfile.mkdtemp(prefix="verity-data-", dir="/var/tmp"))
    settings = Settings(data_dir=folder / "data")
    _link_tiny_model(settings, tiny_model_dir)
    try:
        yield from _serve(settings, jobs_config)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- production shape ------------------------------------------------------------------------------------------


@pytest.fixture
def s3_server(monkeypatch) -> Iterator[str]:
    """An S3-compatible server over HTTP on this machine (moto's server mode), with a bucket."""
    from moto.server import ThreadedMotoServer

    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    import boto3

    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="verity-runs")
    try:
        yield endpoint
    finally:
        server.stop()


_REDIS_DB = iter(range(9, 16))


@pytest.fixture
def broker_server() -> Any:
    """None: the machine's Redis. A module that restarts its broker gives a server of its own here."""
    return None


@pytest.fixture
def redis_url(broker_server: Any) -> str:
    """A Redis database of the machine's server, flushed, for this test alone (or the module's own server)."""
    import redis

    if broker_server is not None:
        return broker_server.url

    db = next(_REDIS_DB)
    redis.Redis(host="127.0.0.1", port=6379, db=db).flushdb()
    return f"redis://127.0.0.1:6379/{db}"


def start_worker(settings: Settings, config: JobsConfig = FAST, log_path: Path | None = None) -> subprocess.Popen:
    """A separate `verity worker` process, as on a GPU machine."""
    env = {
        **os.environ,
        **fast_env(config),
        "VERITY_DATA_DIR": str(settings.data_dir),
        "VERITY_BROKER_URL": settings.broker_url or "",
        "VERITY_STORAGE_URL": settings.storage_url or "",
        "VERITY_S3_ENDPOINT_URL": settings.s3_endpoint_url or "",
        "VERITY_WORKER_GPU": "CPU (tests)",
        "VERITY_WORKER_PRICE_PER_HOUR": "0.5",
    }
    if settings.postgres is not None:
        pg = settings.postgres
        env["VERITY_DATABASE_URL"] = f"postgresql://{pg.user}@{pg.host}:{pg.port}/{pg.dbname}"
    log = open(log_path or os.devnull, "w")  # noqa: SIM115 - the process keeps it open
    return subprocess.Popen(
        [sys.executable, "-m", "verity.cli", "worker", "--queue", "local"],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_worker(worker: subprocess.Popen, signum: int = signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signum)
        worker.wait(timeout=30)


@pytest.fixture
def production(postgres_settings: Settings, tiny_model_dir: Path, redis_url: str, s3_server: str,
               tmp_path: Path) -> Iterator[Site]:
    """PostgreSQL event store, Redis broker, S3 storage over HTTP, and one separate `verity worker` process."""
    settings = Settings(
        data_dir=postgres_settings.data_dir,
        postgres=postgres_settings.postgres,
        broker_url=redis_url,
        storage_url="s3://verity-runs/org",
        s3_endpoint_url=s3_server,
    )
    _link_tiny_model(settings, tiny_model_dir)
    for site in _serve(settings, FAST):
        worker = start_worker(settings, log_path=tmp_path / "worker.log")
        site.children.append(worker)
        yield site
