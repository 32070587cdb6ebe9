"""The jobs' own small bookkeeping, shared by every process and machine: which runs were put on a queue, which
worker holds which run (its heartbeat), and which workers serve which queue.

It lives where every process can reach it without the broker: two tables beside the read models (the SQLite file
in the data folder on the embedded default, the same PostgreSQL database in production), their schema in
migrations/014_job_ledger.sql. The event store stays the truth about runs; this ledger only says who is working on
them right now, so the reconciler can tell a live run from an orphan.

A worker *claims* a run before it records Preparing (one row per run: the claim is the heartbeat row), beats
every few seconds while it supervises the trainer, and deletes the row once the run's ending is recorded. A row
whose beat is older than the stale limit belongs to a worker that died or lost its connection.

Evaluations, reward probes and re-scorings are claimed in the same table, their row's `kind` naming which
(jobs/work_claims.py); `leases()` lists the runs' rows only, `work_leases()` the others'.
"""

from __future__ import annotations

import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from migrations import apply_migrations
from verity.config import Settings

RUN = "run"  # the kind of a run's row; the others are jobs/dispatch_routes.py's EVALUATION, PROBE and RESCORING


@dataclass(frozen=True)
class Lease:
    """A run's row: on which queue it waits, and which worker holds it (None while it waits). For an evaluation, a
    probe or a re-scoring (`kind`), `run_id` is its id and `queue` its kind: only a worker that took it claims it."""

    run_id: UUID
    queue: str
    enqueued_at: float | None
    worker_id: str | None
    host: str | None
    pid: int | None
    claimed_at: float | None
    beat_at: float | None
    kind: str = RUN

    def is_stale(self, now: float, stale_after: float) -> bool:
        return self.worker_id is not None and (self.beat_at or 0.0) < now - stale_after


@dataclass(frozen=True)
class WorkerRow:
    worker_id: str
    queues: list[str]
    host: str
    pid: int
    gpu: str
    price_per_hour: float | None
    beat_at: float


class Ledger:
    """SQL over SQLite (`?` placeholders) or PostgreSQL (`%s`); one short connection per call, so any thread
    may use it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._postgres = settings.postgres is not None
        apply_migrations(settings)  # a worker may start before any web process has migrated the database

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        if self._postgres:
            import psycopg

            assert self.settings.postgres is not None
            with psycopg.connect(self.settings.postgres.conninfo, autocommit=True) as connection:
                yield connection.cursor()
        else:
            path = self.settings.read_model_path
            with closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as connection:
                yield connection.cursor()

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self._postgres else statement

    def _execute(self, statement: str, parameters: tuple = ()) -> int:
        with self._cursor() as cursor:
            cursor.execute(self._sql(statement), parameters)
            return cursor.rowcount

    def _query(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        with self._cursor() as cursor:
            cursor.execute(self._sql(statement), parameters)
            return list(cursor.fetchall())

    # --- runs --------------------------------------------------------------------------------------------------
    def enqueued(self, run_id: UUID, queue: str) -> None:
        """A message for the run reached the broker."""
        self._execute(
            "INSERT INTO job_runs (run_id, queue, enqueued_at) VALUES (?, ?, ?) "
            "ON CONFLICT (run_id) DO UPDATE SET queue = excluded.queue, enqueued_at = excluded.enqueued_at",
            (str(run_id), queue, time.time()),
        )

    def claim(
        self, run_id: UUID, queue: str, worker_id: str, pid: int, stale_after: float, kind: str = RUN
    ) -> bool:
        """Take the run (or the work of `kind`) for this worker; False when another live worker holds it. Only a
        Queued run is claimed, so a stale claim is one whose worker died before it started the run: it is taken
        over."""
        now = time.time()
        host = socket.gethostname()
        self._execute(
            "INSERT INTO job_runs (run_id, queue, kind) VALUES (?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
            (str(run_id), queue, kind),
        )
        taken = self._execute(
            "UPDATE job_runs SET worker_id = ?, host = ?, pid = ?, claimed_at = ?, beat_at = ? "
            "WHERE run_id = ? AND (worker_id IS NULL OR worker_id = ? OR beat_at < ?)",
            (worker_id, host, pid, now, now, str(run_id), worker_id, now - stale_after),
        )
        return taken == 1

    def beat(self, run_id: UUID, worker_id: str) -> bool:
        """False when the row is no longer this worker's (the reconciler ended the run meanwhile)."""
        return (
            self._execute(
                "UPDATE job_runs SET beat_at = ? WHERE run_id = ? AND worker_id = ?",
                (time.time(), str(run_id), worker_id),
            )
            == 1
        )

    def release(self, run_id: UUID, worker_id: str | None = None) -> None:
        """The run's ending is recorded (or it needs no worker any more): forget it."""
        if worker_id is None:
            self._execute("DELETE FROM job_runs WHERE run_id = ?", (str(run_id),))
        else:
            self._execute("DELETE FROM job_runs WHERE run_id = ? AND worker_id = ?", (str(run_id), worker_id))

    def lease(self, run_id: UUID) -> Lease | None:
        rows = self._query(_LEASE_COLUMNS + " WHERE run_id = ?", (str(run_id),))
        return _lease(rows[0]) if rows else None

    def leases(self) -> list[Lease]:
        """The runs' rows."""
        return [_lease(row) for row in self._query(_LEASE_COLUMNS + " WHERE kind = ?", (RUN,))]

    def work_leases(self) -> list[Lease]:
        """The claims of evaluations, probes and re-scorings (jobs/work_claims.py)."""
        return [_lease(row) for row in self._query(_LEASE_COLUMNS + " WHERE kind <> ?", (RUN,))]

    # --- workers -----------------------------------------------------------------------------------------------
    def worker_started(self, worker_id: str, queues: list[str], gpu: str, price_per_hour: float | None) -> None:
        now = time.time()
        self._execute(
            "INSERT INTO job_workers (worker_id, queues, host, pid, gpu, price_per_hour, started_at, beat_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (worker_id) DO UPDATE SET beat_at = excluded.beat_at",
            (worker_id, ",".join(queues), socket.gethostname(), _pid(), gpu, price_per_hour, now, now),
        )

    def worker_beat(self, worker_id: str) -> None:
        self._execute("UPDATE job_workers SET beat_at = ? WHERE worker_id = ?", (time.time(), worker_id))

    def worker_stopped(self, worker_id: str) -> None:
        self._execute("DELETE FROM job_workers WHERE worker_id = ?", (worker_id,))

    def workers(self) -> list[WorkerRow]:
        rows = self._query(
            "SELECT worker_id, queues, host, pid, gpu, price_per_hour, beat_at FROM job_workers ORDER BY worker_id"
        )
        return [WorkerRow(r[0], r[1].split(","), r[2], r[3], r[4], r[5], r[6]) for r in rows]


_LEASE_COLUMNS = "SELECT run_id, queue, enqueued_at, worker_id, host, pid, claimed_at, beat_at, kind FROM job_runs"


def _lease(row: tuple) -> Lease:
    return Lease(UUID(row[0]), *row[1:])


def _pid() -> int:
    import os

    return os.getpid()
