"""The SQLite read models write on one connection per process, kept with a page cache a catch-up page fits in."""

from __future__ import annotations

import multiprocessing

from projections.sql_tables import WRITER_CACHE_KIB, SqliteTables
from verity.config import Settings
from verity.wiring import build_read_models


def step(number: int) -> dict:
    return {
        "run_id": "r", "step": number, "org_id": "o", "steps": 10, "epoch": 0.0, "loss": 1.0,
        "validation_loss": None, "seconds": 0.5, "logged_at": "2026-12-06T00:00:00+00:00",
    }


def _cache_size(tables: SqliteTables) -> int:
    with tables.transaction() as tx:
        return int(tx.cursor.execute("PRAGMA cache_size").fetchone()[0])


def test_transactions_share_one_connection_whose_cache_holds_a_page_of_events(tmp_path):
    tables = build_read_models(Settings(data_dir=tmp_path)).tables
    assert _cache_size(tables) == -WRITER_CACHE_KIB  # KiB, as SQLite writes a size in KiB
    with tables.transaction() as first:
        first.upsert("run_steps", step(1))
    with tables.transaction() as second:
        assert second.cursor.connection is first.cursor.connection
        second.upsert("run_steps", step(2))
    assert [row["step"] for row in tables.select("run_steps", {"run_id": "r"}, order=[("step", False)])] == [1, 2]


def _write_in_child(tables: SqliteTables) -> None:
    inherited = tables._writer  # the parent's, copied by the fork: SQLite's locks are the parent's, not this one's
    with tables.transaction() as tx:
        if tx.cursor.connection is inherited:
            raise SystemExit(3)
        tx.upsert("run_steps", step(3))


def test_a_forked_child_writes_on_a_connection_of_its_own_and_the_parent_goes_on_with_its_own(tmp_path):
    tables = build_read_models(Settings(data_dir=tmp_path)).tables
    with tables.transaction() as tx:
        tx.upsert("run_steps", step(1))
        parents = tx.cursor.connection
    child = multiprocessing.get_context("fork").Process(target=_write_in_child, args=(tables,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    with tables.transaction() as tx:
        assert tx.cursor.connection is parents
        tx.upsert("run_steps", step(2))
    assert [row["step"] for row in tables.select("run_steps", {"run_id": "r"}, order=[("step", False)])] == [1, 2, 3]
