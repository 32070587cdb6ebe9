"""`verity serve` in its own process with a real tiny-model run on it, shared by the run page's browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import consoles
import httpx
import pytest
from run_parts import page  # noqa: F401 (the fixture of the parts' tests, tests/run_parts.py)

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


class Served(consoles.Served):
    """`verity serve` on a free port over a fresh data folder, with its first owner and an owner's API token."""

    def run(self, run_id: str) -> dict:
        return httpx.get(f"{self.url}/api/runs/{run_id}", headers=self.api, timeout=10).json()

    def launch_tiny_run(self) -> str:
        saved = httpx.post(f"{self.url}/api/runs", json=TINY_RUN, headers=self.api, timeout=30)
        assert saved.status_code == 201, saved.text
        run_id = saved.json()["run"]["id"]
        launched = httpx.post(f"{self.url}/api/runs/{run_id}/launch", headers=self.api, timeout=30)
        assert launched.status_code == 200, launched.text
        return run_id


@pytest.fixture(scope="module")
def served(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("verity") / "data"
    models = data_dir / "models"
    models.mkdir(parents=True)
    (models / "tiny-math").symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    with consoles.served_console(data_dir, kind=Served) as console:
        yield console
