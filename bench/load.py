"""Viewers of a live run, as browsers poll it: latency percentiles and errors of the run page and its live parts.

    .venv/bin/python bench/load.py [--viewers 50] [--seconds 30] [--rounds 990] [--round-seconds 10]

A run of 1,000 rounds (the most Rounds allows) with 990 scored, in a fresh data folder (SQLite), served by a real
`verity serve` process on 127.0.0.1 with Redis as its broker (redis://127.0.0.1:6379/13, flushed: the jobs of a
production web process, no worker in it). While the bench lasts the run stays live: a stand-in worker holds its
claim in the jobs' ledger, beats, and scores one more round every --round-seconds, as a training run does. Each
viewer loads the page once, then asks for each live part every 2 s with the stamp the page gave it (204 when
nothing changed, the part when a round arrived), as htmx does. Latency is measured by the viewers, on the
loopback: the server's time plus a little, and the viewers' own work on the same CPUs; the server's own timing of
the same requests (its /-/metrics histogram) is printed after. Printed for all requests, then apart for the page,
the changed parts and the unchanged polls. Loopback only, and bounded in viewers and seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import redis
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from run_page import OWNER, scripted_run  # noqa: E402  (the run page bench's 1,000-round run)

from domain.runs.progress import RoundResult  # noqa: E402
from jobs.ledger import Ledger  # noqa: E402
from verity.config import Settings  # noqa: E402
from verity.wiring import build_application, build_read_models, ensure_default_organization  # noqa: E402

PARTS = ["status", "summary", "reward", "metrics", "rounds", "samples", "logs", "timeline"]
POLL_SECONDS = 2.0
MAX_VIEWERS, MAX_SECONDS = 200, 300
BROKER = "redis://127.0.0.1:6379/13"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def claim(settings: Settings, run_id) -> Ledger:
    ledger = Ledger(settings)
    ledger.enqueued(run_id, "local")
    ledger.claim(run_id, "local", "bench-worker", os.getpid(), stale_after=60)
    return ledger


def live_worker(settings: Settings, ledger: Ledger, run_id, first_round: int, every: float,
                stop: threading.Event) -> None:
    """Holds the run's claim as a worker would (a beat a second), and scores a round every `every` seconds."""
    verity = build_application(settings)
    number, last = first_round, time.monotonic()
    while not stop.wait(1.0):
        ledger.beat(run_id, "bench-worker")
        if time.monotonic() - last < every:
            continue
        last, number = time.monotonic(), number + 1
        verity.record_round_scored(run_id, RoundResult(
            round_number=number, validation_reward=0.5, reward=0.6, signal=0.5, cut_off=0.02, graded_answers=512,
            updated=True, loss=0.01, sampling_seconds=40.0, grading_seconds=1.0, update_seconds=30.0,
            validation_seconds=5.0, mean_answer_tokens=120.0, token_entropy=0.8,
        ))


async def viewer(client: httpx.AsyncClient, path: str, until: float, latencies: dict[str, list[float]],
                 errors: list[str], delay: float) -> None:
    async def get(url: str, **headers: str) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            answer = await client.get(url, headers=headers)
        except httpx.HTTPError as failure:
            errors.append(f"{url}: {type(failure).__name__}")
            return None
        kind = "page" if url == path else ("unchanged part (204)" if answer.status_code == 204 else "changed part")
        latencies.setdefault(kind, []).append(time.perf_counter() - started)
        if answer.status_code not in (200, 204):
            errors.append(f"{url}: {answer.status_code}")
        return answer

    await asyncio.sleep(delay)  # the viewers arrive spread over the first 2 s, as browsers opened at different times
    page = await get(path)
    stamps = dict(re.findall(r'/(\w+)\?v=([^"&]+)', page.text)) if page is not None else {}
    await asyncio.sleep(POLL_SECONDS)
    while time.monotonic() < until:
        for part in PARTS:
            answer = await get(f"{path}/{part}?v={stamps.get(part, '0')}", **{"HX-Request": "true"})
            if answer is not None and answer.status_code == 200:
                found = re.search(rf'/{part}\?v=([^"&]+)', answer.text)
                if found:
                    stamps[part] = found.group(1)
        await asyncio.sleep(POLL_SECONDS)


async def load(url: str, path: str, token: str, viewers: int,
               seconds: float) -> tuple[dict[str, list[float]], list[str]]:
    latencies: dict[str, list[float]] = {}
    errors: list[str] = []
    until = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=viewers, max_keepalive_connections=viewers)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, limits=limits,
                                 timeout=30) as client:
        await asyncio.gather(*(viewer(client, path, until, latencies, errors, POLL_SECONDS * n / viewers)
                               for n in range(viewers)))
    return latencies, errors


def server_buckets(url: str) -> dict[float, float]:
    """The server's own latency histogram of the run page's requests (the run page and its parts), from /-/metrics:
    upper bound in seconds -> requests that took at most that long, over every status."""
    counts: dict[float, float] = {}
    for family in text_string_to_metric_families(httpx.get(f"{url}/-/metrics", timeout=10).text):
        for sample in family.samples:
            if sample.name.endswith("request_duration_seconds_bucket") and "/runs/" in sample.labels.get("path", ""):
                bound = float(sample.labels["le"])
                counts[bound] = counts.get(bound, 0.0) + sample.value
    return counts


def server_words(before: dict[float, float], after: dict[float, float]) -> str:
    """The share within 50 ms and the bucket that holds the 99th percentile, as the server timed its requests."""
    served = {bound: after[bound] - before.get(bound, 0.0) for bound in sorted(after)}
    total = served.get(float("inf"), 0.0)
    if not total:
        return "the server timed no request of the run page"
    p99 = next(bound for bound, count in served.items() if count >= 0.99 * total)
    within = served.get(0.05, 0.0) / total
    return (f"{within:.1%} of {total:,.0f} requests within 50 ms; p99 at most {p99 * 1000:g} ms "
            "(its histogram's bucket)")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=990, help="rounds already scored, of the run's 1,000")
    parser.add_argument("--round-seconds", type=float, default=10.0, help="a new round every so many seconds")
    args = parser.parse_args()
    viewers, seconds = min(args.viewers, MAX_VIEWERS), min(args.seconds, MAX_SECONDS)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder) / "data")
        verity = build_application(settings)
        read_models = build_read_models(settings)
        org_id, project_id = ensure_default_organization(settings, verity, read_models)
        run_id = scripted_run(verity, org_id, project_id, args.rounds, total=1000)
        token = verity.issue_token(org_id, "load bench", "viewer", OWNER, "owner").text
        ledger = claim(settings, run_id)  # before the server's reconciler first looks: the run has its worker
        stop = threading.Event()
        worker = threading.Thread(target=live_worker, daemon=True,
                                  args=(settings, ledger, run_id, args.rounds, args.round_seconds, stop))
        worker.start()
        redis.Redis.from_url(BROKER).flushdb()
        port = free_port()
        env = {**os.environ, "VERITY_DATA_DIR": str(settings.data_dir), "VERITY_API_REQUESTS_PER_MINUTE": "100000",
               "VERITY_BROKER_URL": BROKER}
        server = subprocess.Popen([sys.executable, "-m", "verity.cli", "serve", "--port", str(port)], cwd=REPO,
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 120
            while True:  # up, and its projections caught up with the 1,000 rounds
                try:
                    if httpx.get(f"{url}/readyz", timeout=5).json().get("projection_lag") == 0:
                        break
                except (httpx.HTTPError, ValueError):
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    print("the server never got ready", file=sys.stderr)
                    return 1
                time.sleep(0.5)
            before = server_buckets(url)
            latencies, errors = asyncio.run(load(url, f"/runs/{run_id}", token, viewers, seconds))
            on_server = server_words(before, server_buckets(url))
        finally:
            stop.set()
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    ms = [value * 1000 for values in latencies.values() for value in values]
    print(f"{viewers} viewers for {seconds:g} s of a live run of {args.rounds:,} rounds (a round every "
          f"{args.round_seconds:g} s), {len(ms):,} requests ({len(ms) / seconds:.0f} a second), "
          f"{os.cpu_count()} CPUs")
    for kind, values in [("all", ms), *((k, [v * 1000 for v in vs]) for k, vs in sorted(latencies.items()))]:
        print(f"{kind:<22} {len(values):>6} requests: p50 {percentile(values, 0.5):7.1f} ms, p95 "
              f"{percentile(values, 0.95):7.1f} ms, p99 {percentile(values, 0.99):7.1f} ms, max {max(values):7.1f} ms")
    print(f"on the server (its own timing, /-/metrics): {on_server}")
    print(f"errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
