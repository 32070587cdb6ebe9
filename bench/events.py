"""Events appended per second, projection catch-up and rebuild events per second, for 10,000 round events.

    .venv/bin/python bench/events.py [--events 10000] [--backend sqlite|postgres|both] [--save-every 1]

Appending saves one RoundScored event per save(), as the jobs do (the run is held in memory, so no reload is
timed); --save-every N saves N at a time, to build a long log quickly. Catch-up applies the whole log from zero to
every read model, a page of 1,000 events and the positions per transaction; the rebuild then empties the read
models and applies the log again (`verity projections rebuild`), and the line under the table says how long a
million events would take at that rate. PostgreSQL runs in a temporary database on 127.0.0.1:5432 unless
VERITY_DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from domain.actors import Actor
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from projections.tables import Tables
from tests.rounds import scored_round
from verity.config import PostgresSettings, Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "bench@localhost", "bench@localhost")
TRAINER = {"kind": "system", "id": "trainer", "name": "Trainer"}
ROUNDS_PER_RUN = 1000  # the most rounds a run may have


@contextmanager
def postgres_settings(data_dir: Path) -> Iterator[Settings]:
    url = os.environ.get("VERITY_DATABASE_URL")
    if url:
        yield Settings(data_dir=data_dir, postgres=PostgresSettings.from_url(url))
        return
    import psycopg

    name = f"verity_bench_{uuid.uuid4().hex[:10]}"
    admin = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield Settings(data_dir=data_dir, postgres=PostgresSettings("127.0.0.1", 5432, name, "postgres", ""))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def result(number: int) -> RoundResult:
    validation = 0.3 + (number % 50) / 100
    return scored_round(
        number, validation, reward=0.41, mean_answer_tokens=100.0, token_entropy=0.7, peak_memory_bytes=2**30
    )


def bench(settings: Settings, events: int, save_every: int = 1) -> tuple[float, float, float, int]:
    verity = build_application(settings)
    read_models = build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    body = {
        "training": {
            "rl": {"rounds": ROUNDS_PER_RUN, "reward": {"preset": "verifiable", "metric": "math_pairs"}}
        }
    }
    runs = []
    for _ in range((events + ROUNDS_PER_RUN) // (ROUNDS_PER_RUN + 1)):
        run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
        verity.launch_run(org_id, run_id, OWNER, "owner")
        verity.record_preparing(run_id)
        runs.append(verity.get_run(org_id, run_id))
    appended = 0
    started = time.perf_counter()
    for run in runs:
        for number in range(ROUNDS_PER_RUN + 1):
            if appended == events:
                break
            run.score_round(result(number).to_dict(), TRAINER)
            appended += 1
            if appended % save_every == 0:
                verity.save(run)
        verity.save(run)
    append_seconds = time.perf_counter() - started
    total = verity.recorder.max_notification_id()
    started = time.perf_counter()
    caught_up = ProjectionRunner(verity, read_models).run_once()
    catch_up_seconds = time.perf_counter() - started
    assert caught_up == total and read_models.position() == total
    cast(Tables, read_models.tables).clear()  # a rebuild starts from empty read models
    started = time.perf_counter()
    rebuilt = ProjectionRunner(verity, read_models).run_once()
    rebuild_seconds = time.perf_counter() - started
    assert rebuilt == total
    close = getattr(read_models.tables, "close", None)
    if close:
        close()
    verity.close()
    return appended / append_seconds, caught_up / catch_up_seconds, rebuilt / rebuild_seconds, caught_up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--save-every", type=int, default=1, help="round events per save() while appending")
    args = parser.parse_args()
    print(f"{'store':<10} {'appended/s':>12} {'catch-up/s':>12} {'rebuild/s':>12} {'log events':>11}")
    rebuilds = []
    with tempfile.TemporaryDirectory() as folder:
        if args.backend in ("sqlite", "both"):
            append, catch_up, rebuild, count = bench(
                Settings(data_dir=Path(folder) / "sqlite"), args.events, args.save_every
            )
            print(f"{'SQLite':<10} {append:>12,.0f} {catch_up:>12,.0f} {rebuild:>12,.0f} {count:>11,}")
            rebuilds.append(("SQLite", rebuild))
        if args.backend in ("postgres", "both"):
            with postgres_settings(Path(folder) / "postgres") as settings:
                append, catch_up, rebuild, count = bench(settings, args.events, args.save_every)
            print(f"{'PostgreSQL':<10} {append:>12,.0f} {catch_up:>12,.0f} {rebuild:>12,.0f} {count:>11,}")
            rebuilds.append(("PostgreSQL", rebuild))
    for store, rate in rebuilds:
        print(f"A rebuild of 1,000,000 events on {store} would take about {1_000_000 / rate:,.0f} s at this rate.")


if __name__ == "__main__":
    main()
