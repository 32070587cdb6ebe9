"""How fast the run page renders: a run of 1,000 scripted rounds on SQLite, the page and each live part.

    .venv/bin/python bench/run_page.py [--rounds 1000] [--repeat 9]

First, the seconds to record a round near round 100 and near the last round (each the mean of the records of one
snapshot interval, so each window takes one snapshot), and their ratio: a command loads the run from its latest
snapshot, so recording round 1,000 should cost about what recording round 100 does (at most 1.5 times). Both are
timed in a run of their own, recorded with nothing else running: the page's run lands its last rounds between
requests, beside the app's threads, which made the late records slower for reasons that are not the run's length.
Prints the median server-side time of each request (the app in-process through Litestar's test client, timed from
the app's ASGI call to its end, so the figure is routing, reading the read models, and rendering; no network, and
not the test client's own work): for the process's first viewer of the run
(nothing read or drawn yet), for the first viewer after a round lands (the run's rounds read before it are kept:
only the new one is read), and for the other viewers of that state (who get what the first drew). A live part
whose run did not change answers 204, which is what a polling page mostly gets: it is timed too.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from app.shell.kept import KeptByState
from domain.actors import Actor
from domain.application import RUN_SNAPSHOT_INTERVAL
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from domain.storage_keys import rollout_key
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.storage import open_storage
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
PARTS = ["status", "summary", "reward", "metrics", "rounds", "samples", "logs", "timeline", "prompts"]
TRAINING_PROMPTS = 4096  # the scripted run's training prompts: 1,000 rounds of 64 draw each about 16 times


def round_prompts(number: int, per_round: int = 64, answers: int = 8) -> dict:
    """Round `number`'s prompts as the trainer sums them up (trainer/prompt_summary.py): the next `per_round` of the
    training prompts, each with made-up scores that rise with the rounds."""
    rng = random.Random(number)
    start = (number - 1) * per_round % TRAINING_PROMPTS
    passed = [min(max(round(rng.gauss(answers * number / 1000, 2)), 0), answers) for _ in range(per_round)]
    return {
        "index": [(start + p) % TRAINING_PROMPTS for p in range(per_round)],
        "mean": [round(n / answers * 0.9 + 0.1 * rng.random(), 4) for n in passed],
        "passed": passed,
        "taught": [0 < n < answers for n in passed],
        "tokens": [rng.randint(40, 160) * answers for _ in passed],
        "answers": answers,
    }


def scripted_run(verity, org_id, project_id, rounds: int, total: int | None = None,
                 record_seconds: list[float] | None = None):
    """A training run with `rounds` rounds scored, of `total` (default: those); `record_seconds` gets the seconds
    each round took to record, round 0 first."""
    body = {"name": f"{rounds} rounds", "training": {"rl": {"rounds": total or rounds, "reward": MATH_PAIRS}}}
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    for number in range(rounds + 1):
        started = time.perf_counter()
        verity.record_round_scored(run_id, scored_round(number, rounds))
        if record_seconds is not None:
            record_seconds.append(time.perf_counter() - started)
    return run_id


def seconds_to_record(rounds: int) -> list[float]:
    """The seconds each round of a run of `rounds` took to record, round 0 first: a run of its own, in an
    application of its own, with nothing else running."""
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder))
        verity = build_application(settings)
        org_id, project_id = ensure_default_organization(settings, verity, build_read_models(settings))
        record_seconds: list[float] = []
        scripted_run(verity, org_id, project_id, rounds, record_seconds=record_seconds)
        verity.close()
        return record_seconds


def recording_cost(record_seconds: list[float]) -> None:
    """Prints the mean seconds to record the rounds up to round 100 and up to the last, one snapshot interval each."""
    last = len(record_seconds) - 1
    if last < 100 + RUN_SNAPSHOT_INTERVAL:
        return
    early, late = record_seconds[101 - RUN_SNAPSHOT_INTERVAL:101], record_seconds[last + 1 - RUN_SNAPSHOT_INTERVAL:]
    ratio = statistics.mean(late) / statistics.mean(early)
    print(f"recording round 100: {statistics.mean(early) * 1000:.2f} ms, round {last}: "
          f"{statistics.mean(late) * 1000:.2f} ms ({ratio:.2f}x; mean of {RUN_SNAPSHOT_INTERVAL} records each, "
          f"medians {statistics.median(early) * 1000:.2f} and {statistics.median(late) * 1000:.2f} ms)")


class ServerClock:
    """The seconds the app spent on the last request, from the ASGI call to its end: the test client's own work
    (building the request, cookies, handing it to the app's thread and back, about 1-2 ms a request on a slow CPU)
    is not the server's."""

    def __init__(self, app: Any) -> None:
        self.last = 0.0
        handler = app.asgi_handler

        async def timed_handler(scope: Any, receive: Any, send: Any) -> None:
            started = time.perf_counter()
            try:
                await handler(scope, receive, send)
            finally:
                self.last = time.perf_counter() - started

        app.asgi_handler = timed_handler


def timed(client: TestClient, clock: ServerClock, url: str, repeat: int, headers: dict[str, str] | None = None,
          before: Callable[[], None] | None = None) -> tuple[float, int]:
    """Median server-side milliseconds of `url`; `before` runs ahead of each request, untimed."""
    times, status = [], 0
    for _ in range(repeat):
        if before is not None:
            before()
        answer = client.get(url, headers=headers or {})
        times.append(clock.last)
        status = answer.status_code
        assert status in (200, 204), (url, status, answer.text[:500])
    return statistics.median(times) * 1000, status


def write_rollouts(storage: Any, run_id: Any, number: int, prompts: int = 64, answers: int = 8) -> None:
    """Round `number`'s rollout file as the trainer writes it (trainer/rollouts.py): a line per prompt, with its
    answers of about 120 tokens and their scores."""
    lines = []
    for index in range(prompts):
        prompt = [{"role": "system", "content": "Answer with the number only."},
                  {"role": "user", "content": f"What is {index} + {number}? Show your working first."}]
        outcomes = [{"answer": f"Adding {index} and {number} step by step. " * 12 + f"The answer is {index + number}.",
                     "reward": float(draw % 2), "cut_off": draw == 7, "failure": None, "tokens": 120}
                    for draw in range(answers)]
        lines.append(json.dumps({"prompt": prompt, "reference": str(index + number), "answers": outcomes}) + "\n")
    staged = storage.stage(rollout_key(run_id, number))
    staged.write("".join(lines).encode())
    staged.commit()


def scored_round(number: int, rounds: int) -> RoundResult:
    reward = None if number == 0 else min(0.2 + number / (rounds * 1.6), 1.0)
    return RoundResult(
        round_number=number, validation_reward=0.25 + number / (rounds * 2), reward=reward,
        signal=None if number == 0 else 0.6, cut_off=None if number == 0 else 0.03,
        graded_answers=0 if number == 0 else 512, updated=number > 0, loss=None if number == 0 else 0.01,
        sampling_seconds=40.0, grading_seconds=1.0, update_seconds=30.0, validation_seconds=5.0,
        mean_answer_tokens=None if number == 0 else 120.0, token_entropy=None if number == 0 else 0.8,
        accuracy=None if number == 0 else reward, prompts=None if number == 0 else round_prompts(number),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1000, help="the run's Rounds (at most 1,000)")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    landing = (len(PARTS) + 1) * args.repeat  # rounds left to land while the first viewers are timed
    scored = args.rounds - landing  # rounds 0 to `scored` now, the others while timing: the last is `--rounds`
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder))
        verity = build_application(settings)
        read_models = build_read_models(settings)
        org_id, project_id = ensure_default_organization(settings, verity, read_models)
        started = time.perf_counter()
        run_id = scripted_run(verity, org_id, project_id, scored, args.rounds)
        runner = ProjectionRunner(verity, read_models)
        while runner.run_once():
            pass
        print(f"{scored} rounds recorded and projected in {time.perf_counter() - started:.1f} s")
        next_round = iter(range(scored + 1, args.rounds + 1))

        storage = open_storage(settings)
        write_rollouts(storage, run_id, scored)

        def land_round() -> None:
            """A round arrives and the read models take it in: the run's state, and its stamp, move on. Its rollout
            file is written first, as the trainer does, so the Samples part reads a real one."""
            number = next(next_round)
            write_rollouts(storage, run_id, number)
            verity.record_round_scored(run_id, scored_round(number, scored))
            while runner.run_once():
                pass

        app = create_app(verity, read_models, runner=runner, storage=storage)
        clock = ServerClock(app)
        with TestClient(app) as client:
            sign_in_as(client, verity, read_models, org_id)
            htmx = {"HX-Request": "true"}
            # The first viewer after a round lands draws what it asks for (reading only the new round); the other
            # viewers of that state get what it drew. The process's first viewer of a run reads all its rounds.
            print(f"{'':<22}{'first ever':>12}{'first after a round':>22}{'other viewers':>16}")
            for part in ["page", *PARTS]:
                url, headers = (f"/runs/{run_id}", {}) if part == "page" else (f"/runs/{run_id}/{part}", htmx)
                ever, _ = timed(client, clock, url, args.repeat, headers, before=KeptByState.forget_all)
                after_a_round, _ = timed(client, clock, url, args.repeat, headers, before=land_round)
                others, _ = timed(client, clock, url, args.repeat, headers)
                name = part if part == "page" else f"part {part}"
                print(f"{name:<22}{ever:9.1f} ms{after_a_round:19.1f} ms{others:13.1f} ms")
            stamp = client.get(f"/runs/{run_id}/status", headers=htmx).text.split("?v=", 1)[1].split('"', 1)[0]
            ms, status = timed(client, clock, f"/runs/{run_id}/rounds?v={stamp}", args.repeat, htmx)
            print(f"{'unchanged poll':<22}{ms:9.1f} ms  ({status})")
            # the Prompts tab as a whole page, filtered and sorted, and an opened prompt
            for query in ("", "?verdict=flipping", "?sort=mean&page=3"):
                url = f"/runs/{run_id}/prompts{query}"
                ms, _ = timed(client, clock, url, args.repeat, before=KeptByState.forget_all)
                print(f"{'prompts tab' + query:<22}{ms:9.1f} ms")
            ms, _ = timed(client, clock, f"/runs/{run_id}/prompts/7", args.repeat, htmx)
            print(f"{'an opened prompt':<22}{ms:9.1f} ms")
    recording_cost(seconds_to_record(args.rounds))


if __name__ == "__main__":
    main()
