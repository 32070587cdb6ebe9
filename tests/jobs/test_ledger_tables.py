"""The jobs' ledger keeps its two tables beside the read models, made by a migration (migrations/014_job_ledger.sql):
a database where the ledger made them itself, as it did before, keeps them and what they hold; a rebuild of the
read models leaves them alone; and processes that start on one new database at once all find the whole schema."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from uuid import uuid4

import psycopg
import pytest

from jobs.ledger import Ledger
from migrations import apply_migrations, migration_files
from projections.sql_tables import PostgresTables, open_tables
from verity.config import Settings

# The table as jobs/ledger.py made it before the migration did.
LEDGER_MADE_IT = """CREATE TABLE job_runs (
    run_id TEXT PRIMARY KEY, queue TEXT NOT NULL, enqueued_at DOUBLE PRECISION, worker_id TEXT, host TEXT,
    pid INTEGER, claimed_at DOUBLE PRECISION, beat_at DOUBLE PRECISION
)"""


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request) -> Settings:
    return request.getfixturevalue(f"{request.param}_settings")


def _execute(settings: Settings, statement: str, parameters: tuple = ()) -> None:
    if settings.postgres is not None:
        with psycopg.connect(settings.postgres.conninfo, autocommit=True) as connection:
            connection.execute(statement.replace("?", "%s"), parameters)
    else:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(settings.read_model_path, isolation_level=None)) as connection:
            connection.execute(statement, parameters)


def test_a_database_whose_ledger_made_its_own_tables_keeps_them_and_their_rows(settings: Settings) -> None:
    run_id = uuid4()
    _execute(settings, LEDGER_MADE_IT)
    _execute(settings, "INSERT INTO job_runs (run_id, queue, enqueued_at) VALUES (?, ?, ?)", (str(run_id), "a", 1.5))

    ledger = Ledger(settings)  # migrates: 014 finds job_runs there

    lease = ledger.lease(run_id)
    assert lease is not None and lease.queue == "a" and lease.enqueued_at == 1.5
    assert ledger.claim(run_id, "a", "w1", 1, stale_after=60.0)
    ledger.worker_started("w1", ["local"], "cpu", None)
    assert [worker.worker_id for worker in ledger.workers()] == ["w1"]


def test_a_rebuild_of_the_read_models_leaves_the_ledger_alone(settings: Settings) -> None:
    ledger = Ledger(settings)
    run_id = uuid4()
    ledger.enqueued(run_id, "local")

    tables = open_tables(settings)
    try:
        tables.clear()  # what `verity projections rebuild` does before it applies the log again
    finally:
        if isinstance(tables, PostgresTables):
            tables.close()

    assert ledger.lease(run_id) is not None


def test_processes_migrating_one_new_database_at_once_all_find_the_whole_schema(settings: Settings) -> None:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    applied: list[list[str]] = []
    failures: list[BaseException] = []

    def migrate() -> None:
        try:
            applied.append(apply_migrations(settings))
        except BaseException as error:  # the test reports it below
            failures.append(error)

    threads = [threading.Thread(target=migrate) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert failures == []
    names = [path.name for path in migration_files("postgres" if settings.postgres else "sqlite")]
    assert sorted(name for done in applied for name in done) == sorted(names)  # each file applied once
    assert Ledger(settings).leases() == []
