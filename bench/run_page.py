"""How fast the run page renders: a run of 1,000 scripted rounds on SQLite, the page and each live part.

    .venv/bin/python bench/run_page.py [--rounds 1000] [--repeat 15]

Prints the median server-side time of each request (the app in-process through Litestar's test client, so the
figure is routing, reading the read models, and rendering; no network). A live part whose run did not change
answers 204, which is what a polling page mostly gets: it is timed too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from domain.actors import Actor
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.storage import open_storage
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
PARTS = ["status", "summary", "reward", "metrics", "rounds", "samples", "logs", "timeline"]


def scripted_run(verity, org_id, project_id, rounds: int, total: int | None = None):
    """A training run with `rounds` rounds scored, of `total` (default: those)."""
    body = {"name": f"{rounds} rounds", "training": {"rl": {"rounds": total or rounds, "reward": MATH_PAIRS}}}
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    for number in range(rounds + 1):
        reward = None if number == 0 else min(0.2 + number / (rounds * 1.6), 1.0)
        verity.record_round_scored(
            run_id,
            RoundResult(
                round_number=number,
                validation_reward=0.25 + number / (rounds * 2),
                reward=reward,
                signal=None if number == 0 else 0.6,
                cut_off=None if number == 0 else 0.03,
                graded_answers=0 if number == 0 else 512,
                updated=number > 0,
                loss=None if number == 0 else 0.01,
                sampling_seconds=40.0,
                grading_seconds=1.0,
                update_seconds=30.0,
                validation_seconds=5.0,
                mean_answer_tokens=None if number == 0 else 120.0,
                token_entropy=None if number == 0 else 0.8,
                accuracy=None if number == 0 else reward,
            ),
        )
    return run_id


def timed(client: TestClient, url: str, repeat: int, headers: dict[str, str] | None = None) -> tuple[float, int]:
    times, status = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        answer = client.get(url, headers=headers or {})
        times.append(time.perf_counter() - start)
        status = answer.status_code
        assert status in (200, 204), (url, status, answer.text[:500])
    return statistics.median(times) * 1000, status


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder))
        verity = build_application(settings)
        read_models = build_read_models(settings)
        org_id, project_id = ensure_default_organization(settings, verity, read_models)
        started = time.perf_counter()
        run_id = scripted_run(verity, org_id, project_id, args.rounds)
        runner = ProjectionRunner(verity, read_models)
        while runner.run_once():
            pass
        print(f"{args.rounds} rounds recorded and projected in {time.perf_counter() - started:.1f} s")
        app = create_app(verity, read_models, runner=runner, storage=open_storage(settings))
        with TestClient(app) as client:
            sign_in_as(client, verity, read_models, org_id)
            htmx = {"HX-Request": "true"}
            ms, _ = timed(client, f"/runs/{run_id}", args.repeat)
            print(f"{'page':<22}{ms:8.1f} ms")
            for part in PARTS:
                ms, _ = timed(client, f"/runs/{run_id}/{part}", args.repeat, htmx)
                print(f"{'part ' + part:<22}{ms:8.1f} ms")
            stamp = client.get(f"/runs/{run_id}/status", headers=htmx).text.split("?v=", 1)[1].split('"', 1)[0]
            ms, status = timed(client, f"/runs/{run_id}/rounds?v={stamp}", args.repeat, htmx)
            print(f"{'unchanged poll':<22}{ms:8.1f} ms  ({status})")


if __name__ == "__main__":
    main()
