"""The read models' schema: numbered .sql files applied once each, in order, by `verity migrate`.

A file `NNN_name.sql` serves both databases; `NNN_name.sqlite.sql` / `NNN_name.postgres.sql` serve one dialect
where they must differ.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from projections.sql_tables import PostgresTables, SqliteTables, open_tables
from projections.tables import SqlTx

MIGRATIONS_DIR = Path(__file__).parent
CREATE_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
)
# PostgreSQL's advisory lock of whoever makes the schema ("veri"): the read models' migrations, and the event
# store's tables (verity/wiring.py)
MIGRATION_LOCK = 0x76657269


def migration_files(dialect: str) -> list[Path]:
    files = []
    for path in sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9]_*.sql")):
        parts = path.name.split(".")
        if len(parts) == 2 or parts[-2] == dialect:
            files.append(path)
    return files


def apply_to(tables: SqliteTables | PostgresTables) -> list[str]:
    """Applies the migrations not applied yet; returns their names."""
    with tables.transaction() as tx:
        _serialise(tables, tx)
        tx.cursor.execute(CREATE_MIGRATIONS_TABLE)
    applied = {row["name"] for row in tables.select("schema_migrations", {})}
    done = []
    for path in migration_files(tables.dialect):
        if path.name in applied:
            continue
        with tables.transaction() as tx:
            _serialise(tables, tx)
            if tx.select("schema_migrations", {"name": path.name}):
                continue  # another process applied it while this one waited
            for statement in _statements(path.read_text()):
                tx.cursor.execute(statement)
            tx.cursor.execute(
                "INSERT INTO schema_migrations (name, applied_at) "
                f"VALUES ({tx.mark.format('n')}, {tx.mark.format('t')})",
                {"n": path.name, "t": datetime.now(UTC).isoformat()},
            )
        done.append(path.name)
    return done


def _serialise(tables: SqliteTables | PostgresTables, tx: SqlTx) -> None:
    """Every process that needs the schema applies it (the web process, `verity migrate`, the jobs' ledger in each
    worker), so several may start at once on a new database: they take their turns. SQLite's BEGIN IMMEDIATE
    already does; PostgreSQL takes a lock held until the transaction ends."""
    if tables.dialect == "postgres":
        tx.cursor.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")


def _statements(sql: str) -> list[str]:
    lines = [line for line in sql.splitlines() if not line.strip().startswith("--")]
    return [statement.strip() for statement in "\n".join(lines).split(";") if statement.strip()]


def apply_migrations(settings: Any) -> list[str]:
    tables = open_tables(settings)
    try:
        return apply_to(tables)
    finally:
        if isinstance(tables, PostgresTables):
            tables.close()
