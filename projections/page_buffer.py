"""A page of events' changes to the read models, held in memory and written once per row when the page ends."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from operator import itemgetter
from typing import Any

from projections.tables import TABLE_KEYS, Row

# Each table's key of a row: the one key column's value, or a tuple of them (made in C, once per read or write).
_KEY_OF: dict[str, Callable[[Row], Any]] = {table: itemgetter(*columns) for table, columns in TABLE_KEYS.items()}
_UNREAD: Any = object()  # a row the page has not read yet (None: read, and not there)


class PageBuffer:
    """A page's changes held in memory and written once per row at the end (`flush`), in its transaction.

    A page of round events touches the same run rows a thousand times; reading and writing them once makes
    catch-up a matter of a few statements per page instead of several per event.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._rows: dict[str, dict[Any, Row | None]] = {table: {} for table in TABLE_KEYS}
        self._dirty: dict[tuple[str, Any], None] = {}  # insertion-ordered set of (table, key)
        self._written: dict[str, dict[Any, Row]] = {}  # table -> key -> a row handed over by `write`

    def _held(self, table: str, key: Row) -> tuple[Any, Row | None]:
        """The row as the page left it, read from the tables the first time the page asks for it."""
        rows, slot = self._rows[table], _KEY_OF[table](key)
        row = rows.get(slot, _UNREAD)
        if row is _UNREAD:
            row = rows[slot] = self.inner.get(table, key)
        return slot, row

    def get(self, table: str, key: Row) -> Row | None:
        row = self._held(table, key)[1]
        return dict(row) if row is not None else None

    def peek(self, table: str, key: Row) -> Row | None:
        """The row itself, not a copy, for a caller that only reads it (a page reads the directory several times
        per event)."""
        return self._held(table, key)[1]

    # The rows held are the buffer's own (`get` hands out copies, `upsert` keeps one), so they change in place.
    def upsert(self, table: str, row: Row) -> None:
        rows, slot = self._rows[table], _KEY_OF[table](row)
        held = rows.get(slot)
        if held:
            held.update(row)
        else:
            rows[slot] = dict(row)
        self._dirty[(table, slot)] = None

    def update(self, table: str, key: Row, values: Row) -> None:
        slot, row = self._held(table, key)
        if row is not None:
            row.update(values)
            self._dirty[(table, slot)] = None

    def write(self, table: str, row: Row) -> None:
        """A row that no event of the page reads back, kept as it is given (not copied, not looked up) until the
        page is written; the last one of a key stands. Most of a page's rows are such: a round's row, its timeline
        and feed lines."""
        written = self._written.get(table)
        if written is None:
            written = self._written[table] = {}
        written[_KEY_OF[table](row)] = row

    def flush(self) -> None:
        """Writes each changed row once: rows of a table with the same columns in one statement."""
        groups: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
        for table, slot in self._dirty:
            row = self._rows[table][slot]
            if row is not None:
                groups.setdefault((table, tuple(row)), []).append(row)
        for table, written in self._written.items():
            for row in written.values():
                groups.setdefault((table, tuple(row)), []).append(row)
        batch = getattr(self.inner, "batch", None)  # the SQL tables send a page's groups together
        with batch() if batch is not None else nullcontext():
            for (table, _), rows in groups.items():
                self.inner.upsert_many(table, rows)
        self._dirty.clear()
        self._written.clear()
