"""`verity try-production`: the production layout on one machine in one command (two web processes, two workers,
PostgreSQL, Redis and a local S3 server), ready, training a run that writes to S3, and gone at SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import httpx
import pytest
from consoles import create_token

from tests.e2e.conftest import free_port
from verity.config import PostgresSettings, Settings
from verity.production_try import BUCKET, S3_KEYS

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

TWO_ROUNDS = {
    "name": "two rounds on the layout",
    "training": {
        "rl": {"rounds": 2, "prompts_per_round": 4, "answers_per_prompt": 4, "max_answer_tokens": 16,
               "reward": {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}},
        "advanced": {"learning_rate": 5e-4},
    },
}


def two_free_ports() -> int:
    """A port free with the one after it (the layout's workers take the first health port and those after)."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two free ports in a row")


def ready(url: str, deadline: float) -> dict:
    while True:
        try:
            answer = httpx.get(url, timeout=5)
            if answer.status_code == 200:
                return answer.json()
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"{url} never got ready"
        time.sleep(0.5)


def test_one_command_starts_the_layout_which_trains_a_run_into_s3_and_stops_whole(
    tmp_path: Path, postgres: PostgresSettings, redis_url: str, tiny_model_dir: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    settings.models_dir.mkdir(parents=True)
    settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    port, s3_port, health_port = free_port(), free_port(), two_free_ports()
    database_url = f"postgresql://postgres@127.0.0.1:5432/{postgres.dbname}"
    env = {**os.environ, "VERITY_DATA_DIR": str(settings.data_dir)}
    log = tmp_path / "layout.log"  # a file, not a pipe: a pipe nobody reads fills, and blocks the processes' logs
    layout = subprocess.Popen(
        [sys.executable, "-m", "verity.cli", "try-production", "--database-url", database_url,
         "--broker-url", redis_url, "--port", str(port), "--s3-port", str(s3_port),
         "--health-port", str(health_port)],
        env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        try:
            readiness = ready(f"http://127.0.0.1:{port}/readyz", deadline)
        except AssertionError as never:
            raise AssertionError(f"{never}\n{log.read_text(errors='replace')[-3000:]}") from None
        assert readiness["checks"] == {"event_store": "ok", "read_models": "ok", "projections": "ok", "broker": "ok"}
        # The workers start once the console answers (verity/production_try.py), so they get their own time to be
        # ready: on a loaded machine the console's start alone can take most of the first 90 s
        deadline = time.monotonic() + 90
        try:
            workers = {ready(f"http://127.0.0.1:{health_port + n}/readyz", deadline)["worker"] for n in range(2)}
        except AssertionError as never:
            raise AssertionError(f"{never}\n{log.read_text(errors='replace')[-3000:]}") from None
        assert len(workers) == 2

        the_layout = {**env, "VERITY_DATABASE_URL": database_url, "VERITY_BROKER_URL": redis_url}
        api = {"Authorization": f"Bearer {create_token(the_layout)}"}
        url = f"http://127.0.0.1:{port}"
        saved = httpx.post(f"{url}/api/runs", json=TWO_ROUNDS, headers=api, timeout=30)
        assert saved.status_code == 201, saved.text
        run_id = saved.json()["run"]["id"]
        assert httpx.post(f"{url}/api/runs/{run_id}/launch", headers=api, timeout=30).status_code == 200
        while (run := httpx.get(f"{url}/api/runs/{run_id}", headers=api, timeout=10).json())["state"] != "completed":
            assert run["state"] not in ("failed", "cancelled"), run
            assert time.monotonic() < deadline + 120, run
            time.sleep(1)

        s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{s3_port}", region_name="us-east-1",
                          aws_access_key_id=S3_KEYS["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=S3_KEYS["AWS_SECRET_ACCESS_KEY"])
        keys = [item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET, Prefix=f"runs/{run_id}/")["Contents"]]
        assert f"runs/{run_id}/rollouts/round-002.jsonl" in keys  # the rollouts went to the local S3
    finally:
        os.killpg(layout.pid, signal.SIGTERM)
        layout.wait(timeout=60)
    assert layout.returncode == 0, log.read_text(errors="replace")[-3000:]
    for listening in (port, s3_port, health_port, health_port + 1):  # every process of the layout is gone
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{listening}/", timeout=2)
