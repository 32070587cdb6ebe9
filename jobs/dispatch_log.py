"""Where the dispatcher (jobs/dispatcher.py) records how far it followed the event log: one row of `job_dispatch`
beside the read models and the jobs' ledger (migrations/015_job_dispatch.sql), in the SQLite file of the data
folder on the embedded default, in the PostgreSQL database in production.

Each pass of a dispatcher holds the row from reading it to recording the new position, so of several dispatchers
(web processes, workers) exactly one sends at a time and none sends what another already has; one that finds it
taken skips its pass and reads where the other got to. On PostgreSQL the row is locked in the pass's transaction
(`FOR UPDATE SKIP LOCKED`). On SQLite a write transaction can't stay open while the pass sends, since sending
writes the jobs' ledger in the same file: the pass holds a lock on a file beside it (`flock`), which every process
of that data folder sees, and writes the row in a short transaction at its end.
"""

from __future__ import annotations

import fcntl
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any

from verity.config import Settings

NAME = "jobs"
SELECT = "SELECT position, sent_to FROM job_dispatch WHERE name = {mark}"
UPDATE = "UPDATE job_dispatch SET position = {mark}, sent_to = {mark} WHERE name = {mark}"


@dataclass(frozen=True)
class Reached:
    """`sent_to`: every event up to it was dispatched once; `position`: where a restart resumes."""

    position: int
    sent_to: int


class Held:
    """The row, held by this pass: `reached` as it read it; `record` writes the new one while it is held."""

    def __init__(self, reached: Reached, write: Callable[[Reached], None]) -> None:
        self.reached, self._write = reached, write

    def record(self, reached: Reached) -> None:
        self._write(reached)
        self.reached = reached


class DispatchLog:
    """Used by one dispatcher's passes, one at a time: on PostgreSQL over a connection kept between them (a pass is
    tried every fraction of a second by every process), on SQLite over a short connection each."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._postgres: Any = None

    @contextmanager
    def holding(self) -> Iterator[Held | None]:
        """The row for this pass, or None while another dispatcher holds it."""
        if self.settings.postgres is not None:
            with self._kept() as connection, connection.transaction():
                cursor = connection.cursor()
                cursor.execute(SELECT.format(mark="%s") + " FOR UPDATE SKIP LOCKED", (NAME,))
                row = cursor.fetchone()

                def write(reached: Reached) -> None:
                    cursor.execute(UPDATE.format(mark="%s"), (reached.position, reached.sent_to, NAME))

                yield Held(Reached(*row), write) if row is not None else None
            return
        with open(self.settings.read_model_path.with_name("job-dispatch.lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield None
                return
            try:
                yield Held(self.reached(), self._write_sqlite)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def reached(self) -> Reached:
        """Where the dispatchers got to, read without waiting for the one that holds the row."""
        if self.settings.postgres is not None:
            with self._kept() as connection:
                row = connection.execute(SELECT.format(mark="%s"), (NAME,)).fetchone()
        else:
            with closing(self._sqlite()) as connection:
                row = connection.execute(SELECT.format(mark="?"), (NAME,)).fetchone()
        return Reached(*row) if row is not None else Reached(0, 0)

    @contextmanager
    def _kept(self) -> Iterator[Any]:
        """The PostgreSQL connection, opened at first use and again after one that failed."""
        import psycopg

        assert self.settings.postgres is not None
        if self._postgres is None or self._postgres.closed:
            self._postgres = psycopg.connect(self.settings.postgres.conninfo, autocommit=True)
        try:
            yield self._postgres
        except psycopg.OperationalError:
            self._postgres.close()
            raise

    def close(self) -> None:
        if self._postgres is not None:
            self._postgres.close()

    def _write_sqlite(self, reached: Reached) -> None:
        with closing(self._sqlite()) as connection:
            connection.execute(UPDATE.format(mark="?"), (reached.position, reached.sent_to, NAME))

    def _sqlite(self) -> sqlite3.Connection:
        return sqlite3.connect(self.settings.read_model_path, timeout=30, isolation_level=None)
