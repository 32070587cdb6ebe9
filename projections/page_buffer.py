"""A page of events' changes to the read models, held in memory and written once per row when the page ends."""

from __future__ import annotations

from typing import Any

from projections.tables import Row, row_key


class PageBuffer:
    """A page's changes held in memory and written once per row at the end (`flush`), in its transaction.

    A page of round events touches the same run rows a thousand times; reading and writing them once makes
    catch-up a matter of a few statements per page instead of several per event.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._rows: dict[tuple[str, tuple[Any, ...]], Row | None] = {}
        self._dirty: dict[tuple[str, tuple[Any, ...]], None] = {}  # insertion-ordered set

    def get(self, table: str, key: Row) -> Row | None:
        slot = (table, row_key(table, key))
        if slot not in self._rows:
            self._rows[slot] = self.inner.get(table, key)
        row = self._rows[slot]
        return dict(row) if row is not None else None

    def upsert(self, table: str, row: Row) -> None:
        slot = (table, row_key(table, row))
        self._rows[slot] = {**(self._rows.get(slot) or {}), **row}
        self._dirty[slot] = None

    def update(self, table: str, key: Row, values: Row) -> None:
        row = self.get(table, key)
        if row is not None:
            self._rows[(table, row_key(table, key))] = {**row, **values}
            self._dirty[(table, row_key(table, key))] = None

    def flush(self) -> None:
        groups: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
        for slot in self._dirty:
            row = self._rows[slot]
            if row is not None:
                groups.setdefault((slot[0], tuple(row)), []).append(row)
        for (table, _), rows in groups.items():
            self.inner.upsert_many(table, rows)
        self._dirty.clear()
