"""A group of rows upserted into PostgreSQL as one statement over arrays, one array per column (`unnest`).

Why. `executemany` in a pipeline still has the server plan and run the INSERT once per row: ~13 µs a row, most of a
catch-up's time on PostgreSQL. One `INSERT ... SELECT * FROM unnest(...)` inserts a page's rows of a table in one
execution. The same statement fails where two rows share a key ("cannot affect row a second time"); the page buffer
gives each key one row.

Each array is cast to its column's type (read once per table from the catalog). A value is sent in an array only
where the column's type takes it as executemany's single parameter would have been taken: a whole float into an
integer column goes as that integer, a string into a text or JSON column as is; any other value (a fractional float
into an integer column, which PostgreSQL would round, a number into a text column) sends the group by executemany, so
what is stored is what it always was.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

Row = dict[str, Any]

# A column's type as the catalog names it -> the array type its values are sent as.
_ARRAY_TYPES = {
    "integer": "bigint",
    "bigint": "bigint",
    "smallint": "bigint",
    "double precision": "float8",
    "real": "float8",
    "text": "text",
    "json": "json",
    "jsonb": "jsonb",
    "boolean": "bool",
}
_NONE = type(None)
_INTEGERS = {int, _NONE}
_NUMBERS = {int, float, _NONE}
_STRINGS = {str, _NONE}
_BOOLEANS = {bool, _NONE}


def _integers(values: list[Any]) -> list[Any] | None:
    kinds = set(map(type, values))
    if kinds <= _INTEGERS:
        return values
    if kinds <= _NUMBERS and all(value is None or float(value).is_integer() for value in values):
        return [value if value is None else int(value) for value in values]
    return None


def _floats(values: list[Any]) -> list[Any] | None:
    kinds = set(map(type, values))
    if not kinds <= _NUMBERS:
        return None
    return values if int not in kinds else [value if value is None else float(value) for value in values]


def _strings(values: list[Any]) -> list[Any] | None:
    return values if set(map(type, values)) <= _STRINGS else None


def _booleans(values: list[Any]) -> list[Any] | None:
    return values if set(map(type, values)) <= _BOOLEANS else None


_CONVERT: dict[str, Callable[[list[Any]], list[Any] | None]] = {
    "bigint": _integers,
    "float8": _floats,
    "text": _strings,
    "json": _strings,
    "jsonb": _strings,
    "bool": _booleans,
}


def array_types(cursor: Any, table: str) -> dict[str, str]:
    """Each column of the table -> the array type its values go in."""
    cursor.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s",
        (table,),
    )
    return {name: _ARRAY_TYPES[kind] for name, kind in cursor.fetchall() if kind in _ARRAY_TYPES}


def column_arrays(rows: list[Row], columns: Sequence[str], types: dict[str, str]) -> list[list[Any]] | None:
    """The rows' values, one list per column, as each column's array takes them; None where one does not."""
    arrays = []
    for column in columns:
        kind = types.get(column)
        if kind is None:
            return None
        values = _CONVERT[kind]([row[column] for row in rows])
        if values is None:
            return None
        arrays.append(values)
    return arrays


def unnest_statement(
    table: str, columns: Sequence[str], types: dict[str, str], conflict: str, empty: Collection[str] = ()
) -> str:
    """INSERT of the columns from one array parameter each, but NULL for the `empty` ones (no array is sent for
    them), then the table's ON CONFLICT clause."""
    sent = [column for column in columns if column not in empty]
    values = ", ".join("NULL" if column in empty else column for column in columns)
    arrays = ", ".join(f"%b::{types[column]}[]" for column in sent)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values} FROM unnest({arrays}) AS u({', '.join(sent)}) "
        f"{conflict}"
    )
