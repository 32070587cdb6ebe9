"""The in-memory read-model tables: the fast double of the SQL tables (projections/tables.py) for unit tests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from projections.tables import TABLE_KEYS, Order, Row


def row_key(table: str, row: Row) -> tuple[Any, ...]:
    """The values of the table's key columns in `row`."""
    return tuple(row[column] for column in TABLE_KEYS[table])


class MemoryTables:
    """Rows in dicts, one lock for all: the fast double of the SQL tables for unit tests."""

    def __init__(self) -> None:
        self._rows: dict[str, dict[tuple[Any, ...], Row]] = {name: {} for name in TABLE_KEYS}
        self._lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[MemoryTables]:
        with self._lock:
            yield self

    def get(self, table: str, key: Row) -> Row | None:
        row = self._rows[table].get(row_key(table, key))
        return dict(row) if row is not None else None

    peek = get  # its rows are shared between threads: a reader always gets a copy

    def upsert(self, table: str, row: Row) -> None:
        existing = self._rows[table].get(row_key(table, row), {})
        self._rows[table][row_key(table, row)] = {**existing, **row}

    write = upsert

    def update(self, table: str, key: Row, values: Row) -> None:
        row = self._rows[table].get(row_key(table, key))
        if row is not None:
            row.update(values)

    def upsert_many(self, table: str, rows: list[Row]) -> None:
        for row in rows:
            self.upsert(table, row)

    def lock(self) -> None:
        """The transaction already holds the one lock."""

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
        rows = self._matching(table, where)
        if after is not None:
            rows = [row for row in rows if row[after[0]] > after[1]]
        for column, descending in reversed(order):
            rows.sort(key=lambda row, c=column: row[c], reverse=descending)
        if limit is not None:
            rows = rows[offset:offset + limit]
        elif offset:
            raise ValueError("an offset is taken with a limit")
        return [{column: row[column] for column in columns} for row in rows] if columns else rows

    def select_values(self, table: str, where: Row, columns: Sequence[str], order: Order = (),
                      after: tuple[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return [tuple(row.values()) for row in self.select(table, where, order, after, columns=columns)]

    def count(self, table: str, where: Row) -> int:
        return len(self._matching(table, where))

    def count_by(self, table: str, where: Row, column: str) -> dict[Any, int]:
        return dict(Counter(row[column] for row in self._matching(table, where)))

    def sums(self, table: str, where: Row, columns: Sequence[str]) -> Row:
        rows = self._matching(table, where)
        return {column: sum(row[column] for row in rows) if rows else None for column in columns}

    def _matching(self, table: str, where: Row) -> list[Row]:
        """Copies of the rows matching `where`."""
        with self._lock:
            return [dict(row) for row in self._rows[table].values()
                    if all(row.get(column) == value for column, value in where.items())]

    def clear(self) -> None:
        with self._lock:
            for rows in self._rows.values():
                rows.clear()
