"""A round's log line is written when the round is read, from its row: the same words the trainer logs, the update's
passes included; migration 027 drops the stored line and has the rounds projection read the log again."""

from __future__ import annotations

from dataclasses import replace

import migrations
from domain.runs import messages
from migrations import apply_migrations
from projections.sql_tables import open_tables
from verity.config import Settings
from verity.wiring import build_read_models

LOG_LINES = "027_round_log_lines_at_read.sql"


def _scored(stack, owner, round_result):
    run_id = stack.save(rounds=3)
    stack.verity.launch_run(stack.org_id, run_id, owner, "owner")
    stack.verity.record_preparing(run_id)
    results = [round_result(0, 0.3), replace(round_result(1, 0.5), passes=2, clipped=0.034, updated=True),
               round_result(2, 0.4)]
    for result in results:
        stack.verity.record_round_scored(run_id, result)
    return run_id, results


def test_each_rounds_line_is_the_trainers_line_passes_included(stack, owner, round_result):
    run_id, results = _scored(stack, owner, round_result)
    stack.runner.run_once()
    rows = {row.round_number: row for row in stack.read_models.rounds(stack.org_id, run_id)}
    for result in results:
        best = rows[result.round_number].best_round
        assert rows[result.round_number].log_line == messages.round_log_line(result.to_dict(), 3, best)
    assert "updated in 2 passes (clipped 3%)" in rows[1].log_line and rows[1].passes == 2
    assert rows[2].log_line.startswith("Round 2 of 3: reward 0.4100, signal ")


def test_after_the_migration_the_rounds_are_read_again_and_their_lines_name_their_passes(stack, owner, round_result):
    run_id, _ = _scored(stack, owner, round_result)
    stack.runner.run_once()
    with stack.read_models.tables.transaction() as tx:  # the rows as the migration finds them: no passes yet
        tx.cursor.execute("UPDATE rounds SET passes = NULL")
        tx.cursor.execute("DELETE FROM projection_positions WHERE name = 'rounds'")  # what 027 does
    [_, before, _] = stack.read_models.rounds(stack.org_id, run_id)  # newest first
    assert "1 metric failure, updated, loss 0.0120, validation reward 0.5000" in before.log_line
    stack.runner.run_once()
    assert "updated in 2 passes (clipped 3%)" in stack.read_models.rounds(stack.org_id, run_id)[1].log_line


def test_the_migration_drops_the_stored_line_adds_passes_and_rereads_the_rounds(tmp_path, monkeypatch):
    settings = Settings(data_dir=tmp_path)
    every = migrations.migration_files
    monkeypatch.setattr(migrations, "migration_files", lambda d: [p for p in every(d) if p.name != LOG_LINES])
    build_read_models(settings)  # a database as it was before 027
    tables = open_tables(settings)
    with tables.transaction() as tx:
        tx.upsert("projection_positions", {"name": "rounds", "log_position": 40})
        tx.upsert("projection_positions", {"name": "feed", "log_position": 40})
    monkeypatch.setattr(migrations, "migration_files", every)
    assert apply_migrations(settings) == [LOG_LINES]
    with tables.transaction() as tx:
        columns = {row[1] for row in tx.cursor.execute("PRAGMA table_info(rounds)").fetchall()}
        positions = dict(tx.cursor.execute("SELECT name, log_position FROM projection_positions").fetchall())
    assert "passes" in columns and "log_line" not in columns
    assert positions == {"feed": 40}
