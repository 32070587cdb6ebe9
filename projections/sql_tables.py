"""The read models' SQL stores: their own SQLite file, or the event store's PostgreSQL database. Each gives
transactions (projections/tables.py's `SqlTx`) and reads outside them."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from projections.sqlite_checkpoints import BackgroundCheckpoints, use_write_ahead_log
from projections.tables import TABLE_KEYS, Order, Row, SqlTx

# The SQLite writing connection's page cache, KiB: a page of 1,000 round events dirties ~1,000 pages of 4 KiB, and
# pages past the cache spill to the log mid-transaction, to be written again
WRITER_CACHE_KIB = 65_536


class SqlTables:
    """What the SQLite and the PostgreSQL tables share: a read outside any transaction, on a cursor of its own."""

    mark: str

    def reading_cursor(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def select(
        self,
        table: str,
        where: Row,
        order: Order = (),
        after: tuple[str, Any] | None = None,
        limit: int | None = None,
        columns: Sequence[str] = (),
        offset: int = 0,
    ) -> list[Row]:
        with self.reading_cursor() as cursor:
            return SqlTx(cursor, self.mark).select(table, where, order, after, limit, columns, offset)

    def select_values(self, table: str, where: Row, columns: Sequence[str], order: Order = (),
                      after: tuple[str, Any] | None = None) -> list[tuple[Any, ...]]:
        with self.reading_cursor() as cursor:
            return SqlTx(cursor, self.mark).select_values(table, where, columns, order, after)

    def count(self, table: str, where: Row) -> int:
        with self.reading_cursor() as cursor:
            return SqlTx(cursor, self.mark).count(table, where)

    def count_by(self, table: str, where: Row, column: str) -> dict[Any, int]:
        with self.reading_cursor() as cursor:
            return SqlTx(cursor, self.mark).count_by(table, where, column)

    def sums(self, table: str, where: Row, columns: Sequence[str]) -> Row:
        with self.reading_cursor() as cursor:
            return SqlTx(cursor, self.mark).sums(table, where, columns)


class SqliteTables(SqlTables):
    """The read models in their own SQLite file: the process writes on one connection, a transaction at a time, and
    each thread reads on a connection of its own that it keeps (opening one costs more than a live part's read)."""

    mark = ":{}"
    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._writer_pid = 0
        self._readers = threading.local()
        self._checkpoints = BackgroundCheckpoints(self.path)

    def connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        use_write_ahead_log(connection)
        connection.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a crash loses no committed page's order
        connection.execute("PRAGMA wal_autocheckpoint=0")  # a thread of its own checkpoints (sqlite_checkpoints.py)
        return connection

    @contextmanager
    def transaction(self) -> Iterator[SqlTx]:
        with self._write_lock:
            connection = self._writing_connection()
            try:
                connection.execute("BEGIN IMMEDIATE")
                yield SqlTx(connection.cursor(), self.mark)
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        self._checkpoints.nudge()

    def _writing_connection(self) -> sqlite3.Connection:
        """The process's writing connection, kept so that its page cache holds the B-tree pages that catch-up writes
        page after page (a connection per transaction read them back from the log file every time); a child
        process opens its own, as a connection must not cross a fork."""
        if self._writer is None or self._writer_pid != os.getpid():
            self._writer, self._writer_pid = self.connect(), os.getpid()
            self._writer.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
        return self._writer

    @contextmanager
    def reading_cursor(self) -> Iterator[sqlite3.Cursor]:
        """A cursor on this thread's reading connection: in autocommit, each SELECT sees what was last committed."""
        connection = getattr(self._readers, "connection", None)
        if connection is None:
            connection = self._readers.connection = self.connect()
        cursor = connection.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    def clear(self) -> None:
        with self.transaction() as tx:
            for table in TABLE_KEYS:
                tx.cursor.execute(f"DELETE FROM {table}")


class PostgresTables(SqlTables):
    """The read models in the event store's PostgreSQL database, over a small connection pool."""

    mark = "%({})s"
    dialect = "postgres"

    def __init__(self, conninfo: str) -> None:
        from psycopg_pool import ConnectionPool

        self.pool = ConnectionPool(conninfo, min_size=1, max_size=4, open=True)
        self._array_types: dict[str, dict[str, str]] = {}

    @contextmanager
    def transaction(self) -> Iterator[SqlTx]:
        with self.pool.connection() as connection, connection.transaction(), connection.cursor() as cursor:
            yield SqlTx(
                cursor,
                self.mark,
                "LOCK TABLE projection_positions IN EXCLUSIVE MODE",
                positional="%s",
                pipelined=True,
                array_types=self._array_types,
            )

    @contextmanager
    def reading_cursor(self) -> Iterator[Any]:
        with self.pool.connection() as connection, connection.cursor() as cursor:
            yield cursor

    def clear(self) -> None:
        with self.transaction() as tx:
            tx.cursor.execute(f"TRUNCATE {', '.join(TABLE_KEYS)}")

    def close(self) -> None:
        self.pool.close()


def open_tables(settings: Any) -> SqliteTables | PostgresTables:
    """The read models' SQL tables: SQLite in the data folder, or the PostgreSQL database."""
    if settings.postgres is not None:
        return PostgresTables(settings.postgres.conninfo)
    return SqliteTables(settings.read_model_path)
