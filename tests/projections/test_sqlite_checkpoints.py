"""The read models' SQLite log is copied into the database by a thread of its own, after the writer has committed."""

from __future__ import annotations

import time

from projections import sqlite_checkpoints
from verity.config import Settings
from verity.wiring import build_read_models


def step(number: int) -> dict:
    return {
        "run_id": "r", "step": number, "org_id": "o" * 500, "steps": 10_000, "epoch": 0.0, "loss": 1.0,
        "validation_loss": None, "seconds": 0.5, "logged_at": "2026-12-06T00:00:00+00:00",
    }


def test_a_commit_returns_before_the_log_is_copied_and_a_thread_copies_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_checkpoints, "CHECKPOINT_SECONDS", 0.05)
    tables = build_read_models(Settings(data_dir=tmp_path)).tables
    database = tables.path
    time.sleep(0.2)  # the migrations' own commits checkpointed
    before = database.stat().st_size
    # a reader stays connected, as the console's threads do (the last connection to close checkpoints anyway)
    with tables.reading_cursor() as cursor:
        assert cursor.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    with tables.transaction() as tx:  # about 5 MB: past SQLite's own 1,000-page checkpoint
        tx.upsert_many("run_steps", [step(number) for number in range(8_000)])
    deadline = time.monotonic() + 10
    while database.stat().st_size < before + 4_000_000 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert database.stat().st_size > before + 4_000_000  # the rows are in the database file, not only in the log
    assert len(tables.select("run_steps", {"run_id": "r"}, columns=("step",))) == 8_000
