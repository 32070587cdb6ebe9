"""`verity serve` in its own process with a real tiny-model run on it, shared by the run page's browser tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "artifacts"
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": True}
# A small run the tiny model trains in well under a minute on a shared CPU (the product's defaults are for GPUs);
# enough rounds that a quiet machine is still training when the browser has opened the page and seen round 1.
TINY_RUN = {
    "name": "math pairs on the tiny model",
    "training": {
        "time_limit_hours": 1,
        "rl": {
            "rounds": 30,
            "prompts_per_round": 8,
            "answers_per_prompt": 4,
            "max_answer_tokens": 16,
            "reward": MATH_PAIRS,
        },
        "advanced": {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128},
    },
}



@dataclass
class Served:
    """`verity serve` on a free port over a fresh data folder, with its first owner and an owner's API token."""

    url: str
    data_dir: Path
    process: subprocess.Popen
    email: str
    password: str
    token: str

    @property
    def api(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def run(self, run_id: str) -> dict:
        return httpx.get(f"{self.url}/api/runs/{run_id}", headers=self.api, timeout=10).json()

    def launch_tiny_run(self) -> str:
        saved = httpx.post(f"{self.url}/api/runs", json=TINY_RUN, headers=self.api, timeout=30)
        assert saved.status_code == 201, saved.text
        run_id = saved.json()["run"]["id"]
        launched = httpx.post(f"{self.url}/api/runs/{run_id}/launch", headers=self.api, timeout=30)
        assert launched.status_code == 200, launched.text
        return run_id


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("verity") / "data"
    models = data_dir / "models"
    models.mkdir(parents=True)
    (models / "tiny-math").symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    env = {**os.environ, "VERITY_DATA_DIR": str(data_dir)}
    for name in ("VERITY_DATABASE_URL", "VERITY_BROKER_URL", "VERITY_STORAGE_URL"):
        env.pop(name, None)
    port = _free_port()
    log = (data_dir.parent / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "verity.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/sign-in", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"verity serve did not start: {(data_dir.parent / 'serve.log').read_text()[-3000:]}")
            time.sleep(0.2)
        owner = dict(line.split(": ", 1) for line in (data_dir / "first-owner.txt").read_text().splitlines())
        token = subprocess.run(
            [sys.executable, "-m", "verity.cli", "token", "create", "--name", "tests", "--role", "owner"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        yield Served(url, data_dir, process, owner["email"], owner["password"], token)
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # the server and the trainer it may still supervise
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()
