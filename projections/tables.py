"""Where read-model rows live, as the projections and the queries see them: the tables and their keys, a
transaction (`Tx`), the tables (`Tables`), and a transaction on a SQL cursor (`SqlTx`). The SQL stores (SQLite or
PostgreSQL) are projections/sql_tables.py; plain dicts in memory for unit tests, projections/memory_tables.py.

The projections and the queries are written once against `Tables`; a transaction applies a page of events and
the positions it reached together, or nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from operator import itemgetter
from typing import Any, Protocol

from projections import postgres_arrays

# Every read-model table and its key columns (the schema itself is in migrations/).
TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "projection_positions": ("name",),
    "directory": ("aggregate_id",),
    "organizations": ("id",),
    "projects": ("id",),
    "runs": ("id",),
    "run_details": ("id",),
    "rounds": ("run_id", "round_number"),
    "timeline": ("log_position",),
    "feed": ("log_position",),
    # who may do what (migrations/003_access.sql)
    "memberships": ("org_id", "account_id"),
    "api_tokens": ("id",),
    # the catalog (migrations/004): datasets and custom metrics with their versions
    "datasets": ("id",),
    "dataset_versions": ("id",),
    "custom_metrics": ("id",),
    "custom_metric_versions": ("id",),
    # evaluations and training loops (migrations/005)
    "evaluations": ("id",),
    "evaluation_results": ("evaluation_id", "example_index"),
    "loops": ("id",),
    "loop_rounds": ("loop_id", "round_number"),
    # experiments (migrations/009)
    "experiments": ("id",),
    # SFT and DPO steps (migrations/006)
    "run_steps": ("run_id", "step"),
    # the run page's Prompts tab (migrations/018)
    "prompt_rounds": ("run_id", "prompt_index", "round_number"),
    "prompt_histories": ("run_id", "prompt_index"),
    "prompt_costs": ("run_id", "round_number"),
    # reward probes (migrations/020)
    "probes": ("id",),
    # re-scorings of stored answers (migrations/021)
    "rescorings": ("id",),
}

Row = dict[str, Any]
Order = Sequence[tuple[str, bool]]  # (column, descending)


class Tx(Protocol):
    def get(self, table: str, key: Row) -> Row | None: ...
    def peek(self, table: str, key: Row) -> Row | None:
        """`get` for a caller that only reads the row: a store may give its own row rather than a copy."""
        ...
    def upsert(self, table: str, row: Row) -> None: ...
    def write(self, table: str, row: Row) -> None:
        """`upsert` of a row that no event of the page reads back (a round's row, a timeline or feed line), handed
        over: the caller does not touch it again, so a store may keep it as it is until the page is written."""
        ...
    def update(self, table: str, key: Row, values: Row) -> None: ...


class Tables(Protocol):
    def transaction(self) -> Any: ...  # a context manager giving a Tx

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
        """The rows matching `where`, in `order`, after the `after` column's value, at most `limit` from the
        `offset`-th on (an offset is taken with a limit); only the `columns` given (every column when none is)."""
        ...

    def select_values(self, table: str, where: Row, columns: Sequence[str], order: Order = (),
                      after: tuple[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """`select`'s rows as tuples of the `columns`' values, in their order: a read of many rows that makes no
        dict of each (a run page's chart reads 1,000 rounds)."""
        ...

    def count(self, table: str, where: Row) -> int:
        """How many rows match `where` (a page that shows the newest rows says how many there are in all)."""
        ...

    def count_by(self, table: str, where: Row, column: str) -> dict[Any, int]:
        """How many rows match `where`, by their value of `column` (values no row has are absent)."""
        ...

    def sums(self, table: str, where: Row, columns: Sequence[str]) -> Row:
        """Each of the `columns` summed over the rows matching `where`: None where no row does."""
        ...

    def clear(self) -> None: ...


class SqlTx:
    """One open transaction on a DB-API cursor; `mark` is the dialect's placeholder for a named parameter."""

    def __init__(
        self,
        cursor: Any,
        mark: str,
        lock_statement: str | None = None,
        positional: str = "?",
        pipelined: bool = False,
        array_types: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.cursor = cursor
        self.mark = mark
        self.lock_statement = lock_statement
        self.positional = positional  # the dialect's placeholder for a parameter given by its place
        self.pipelined = pipelined  # psycopg: a page's writes go out in one pipeline, without a sync per group
        # PostgreSQL: each table's columns -> array types (projections/postgres_arrays.py), filled as tables are
        # first written; None where a group of rows goes by executemany (SQLite runs it in C already).
        self.array_types = array_types

    def batch(self) -> AbstractContextManager[Any]:
        """Where a page's writes are sent together: one psycopg pipeline, so the server applies a group of rows
        while the next is being sent (an error still surfaces before the transaction commits)."""
        return self.cursor.connection.pipeline() if self.pipelined else nullcontext()

    def lock(self) -> None:
        """Serialises writers of the read models (several web processes may each run a projection runner)."""
        if self.lock_statement:
            self.cursor.execute(self.lock_statement)

    def _p(self, name: str) -> str:
        return self.mark.format(name)

    def get(self, table: str, key: Row) -> Row | None:
        self.cursor.execute(f"SELECT * FROM {table} WHERE {' AND '.join(self._equal(key))}", key)
        row = self.cursor.fetchone()
        return _as_dicts(self.cursor, [row])[0] if row is not None else None

    peek = get  # a row read from the database is a new dict already

    def upsert(self, table: str, row: Row) -> None:
        self.cursor.execute(self._upsert_statement(table, list(row)), row)

    write = upsert

    def upsert_many(self, table: str, rows: list[Row]) -> None:
        """Rows with the same columns, in that order, in one call: on PostgreSQL one statement over an array per
        column where every value goes in its column's array as it is (projections/postgres_arrays.py), else
        executemany (psycopg pipelines it). The values go by place, not by name: the drivers bind a tuple faster
        than they look each column up in a dict."""
        columns = list(rows[0])
        empty = empty_columns(rows, columns)
        sent = [column for column in columns if column not in empty] if empty else columns
        if self.array_types is not None and len(rows) > 1:
            types = self.array_types.get(table)
            if types is None:
                types = self.array_types[table] = postgres_arrays.array_types(self.cursor, table)
            arrays = postgres_arrays.column_arrays(rows, sent, types)
            if arrays is not None:
                conflict = _on_conflict(table, columns)
                statement = postgres_arrays.unnest_statement(table, columns, types, conflict, empty)
                self.cursor.execute(statement, arrays, prepare=True)
                return
        marks = ["NULL" if column in empty else self.positional for column in columns]
        self.cursor.executemany(self._upsert_statement(table, columns, marks), _values(rows, sent, empty))

    def _upsert_statement(self, table: str, columns: list[str], marks: list[str] | None = None) -> str:
        """Inserts the columns, or updates those outside the table's key where the key is taken; the values by
        name unless `marks` gives each column's placeholder."""
        values = ", ".join(marks if marks is not None else [self._p(c) for c in columns])
        return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values}) {_on_conflict(table, columns)}"

    def update(self, table: str, key: Row, values: Row) -> None:
        assignments = ", ".join(f"{column} = {self._p('v_' + column)}" for column in values)
        condition = " AND ".join(f"{column} = {self._p('k_' + column)}" for column in key)
        params = {**{f"v_{c}": v for c, v in values.items()}, **{f"k_{c}": v for c, v in key.items()}}
        self.cursor.execute(f"UPDATE {table} SET {assignments} WHERE {condition}", params)

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
        rows = self._fetch(table, where, order, after, limit, columns, offset)
        return _as_dicts(self.cursor, rows)

    def select_values(self, table: str, where: Row, columns: Sequence[str], order: Order = (),
                      after: tuple[str, Any] | None = None) -> list[tuple[Any, ...]]:
        rows = self._fetch(table, where, order, after, None, columns, 0)
        return [tuple(row.values()) for row in rows] if rows and isinstance(rows[0], dict) else rows

    def _fetch(self, table: str, where: Row, order: Order, after: tuple[str, Any] | None, limit: int | None,
               columns: Sequence[str], offset: int) -> list[Any]:
        """The rows as the driver gives them."""
        conditions = self._equal(where)
        params = dict(where)
        if after is not None:
            conditions.append(f"{after[0]} > {self._p('after_value')}")
            params["after_value"] = after[1]
        sql = f"SELECT {', '.join(columns) or '*'} FROM {table}"
        if conditions:
            sql += " WHERE " + " AND ".join(conditions)
        if order:
            sql += " ORDER BY " + ", ".join(f"{column} {'DESC' if desc else 'ASC'}" for column, desc in order)
        if limit is not None:
            sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
        elif offset:
            raise ValueError("an offset is taken with a limit")
        self.cursor.execute(sql, params)
        return self.cursor.fetchall()

    def count(self, table: str, where: Row) -> int:
        self.cursor.execute(f"SELECT COUNT(*) FROM {table} WHERE {self._condition(where)}", where)
        return int(self.cursor.fetchone()[0])

    def count_by(self, table: str, where: Row, column: str) -> dict[Any, int]:
        self.cursor.execute(f"SELECT {column}, COUNT(*) FROM {table} WHERE {self._condition(where)} GROUP BY {column}",
                            where)
        return {value: int(count) for value, count in self.cursor.fetchall()}

    def sums(self, table: str, where: Row, columns: Sequence[str]) -> Row:
        totals = ", ".join(f"SUM({column})" for column in columns)
        self.cursor.execute(f"SELECT {totals} FROM {table} WHERE {self._condition(where)}", where)
        return dict(zip(columns, self.cursor.fetchone(), strict=True))

    def _condition(self, where: Row) -> str:
        return " AND ".join(self._equal(where)) or "TRUE"

    def _equal(self, where: Row) -> list[str]:
        """Each column of `where` equal to its value, as conditions."""
        return [f"{column} = {self._p(column)}" for column in where]


def _on_conflict(table: str, columns: Sequence[str]) -> str:
    """Where the row's key is taken: update the columns outside the key."""
    keys = TABLE_KEYS[table]
    updates = ", ".join(f"{column} = excluded.{column}" for column in columns if column not in keys)
    return f"ON CONFLICT ({', '.join(keys)}) " + (f"DO UPDATE SET {updates}" if updates else "DO NOTHING")


def empty_columns(rows: list[Row], columns: Sequence[str]) -> frozenset[str]:
    """The columns that are None in every row, which a group's statement writes as NULL rather than sending a None
    per row: Python's sqlite3 binds a None only after looking for an adapter of it (about 0.4 us a value, five times
    a number's), psycopg reads an array of nulls through to find its type, and a round's row has a dozen columns
    that most rounds leave empty. A column the first row fills is not looked at further."""
    first, everywhere = rows[0], len(rows)
    return frozenset(
        column for column in columns
        if first[column] is None and list(map(itemgetter(column), rows)).count(None) == everywhere
    )


def _values(rows: list[Row], sent: list[str], empty: frozenset[str]) -> list[tuple[Any, ...]]:
    """Each row's values of the `sent` columns, by place (the drivers bind a tuple faster than a dict by name)."""
    if not empty:
        return [tuple(row.values()) for row in rows]
    if len(sent) == 1:  # itemgetter of one column gives the value, not a tuple
        return [(row[sent[0]],) for row in rows]
    return list(map(itemgetter(*sent), rows))


def _as_dicts(cursor: Any, rows: list[Any]) -> list[Row]:
    """The rows a cursor read, each as a dict of its columns (the columns named once, not once per row)."""
    if rows and isinstance(rows[0], dict):
        return [dict(row) for row in rows]
    names = [description[0] for description in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in rows]
