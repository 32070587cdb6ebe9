"""The Prompts tab reads only what it shows (app/runs/prompts.py): a page of the list in a sort, of a verdict, the
counts by verdict, the newest rounds' costs and the cost's sums, each worked out by the database. Each is what
sorting, counting and summing all of the run's rows in Python gives, on SQLite, on PostgreSQL and in memory; and
migration 028 gives the histories already stored their mean score."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import fields, replace

import pytest
from rounds import prompts_of_round

import migrations
from app.runs.prompts import SORT_ORDERS
from domain.runs.prompt_verdicts import VERDICTS, DeadCost
from migrations import apply_migrations
from projections.sql_tables import open_tables
from projections.store import memory_read_models
from verity.wiring import build_read_models

MEAN_SCORES = "028_prompt_pages_in_sql.sql"
# Each sort as Python orders all the histories, ties by prompt number
PYTHON_ORDERS = {
    "drawn": lambda h: (-h.draws, h.prompt_index),
    "mean": lambda h: (h.score_sum / h.draws, h.prompt_index),
    "mean-desc": lambda h: (-(h.score_sum / h.draws), h.prompt_index),
    "last": lambda h: (-h.last_round, h.prompt_index),
    "index": lambda h: h.prompt_index,
}


def test_pages_counts_and_sums_are_what_all_the_rows_give(stack, owner, round_result):
    rng = random.Random(5)
    v, org = stack.verity, stack.org_id
    run_id = stack.save(rounds=30)
    v.launch_run(org, run_id, owner, "owner")
    v.record_preparing(run_id)
    v.record_round_scored(run_id, round_result(0, 0.3))
    for number in range(1, 31):  # few draws of few prompts: many ties on every sort's first key
        v.record_round_scored(run_id, replace(round_result(number, 0.3), prompts=prompts_of_round(rng, 60, 8, 4)))
    stack.runner.run_once()
    memory = memory_read_models()  # the same rows in the unit tests' store
    for table, rows in stack.read_models.dump().items():
        if rows:
            memory.tables.upsert_many(table, rows)

    for read_models in (stack.read_models, memory):
        everything = read_models.prompt_histories(org, run_id)
        assert [h.prompt_index for h in everything] == sorted(h.prompt_index for h in everything)
        assert all(h.mean_score == h.score_sum / h.draws for h in everything)
        counts = read_models.prompt_verdicts(org, run_id)
        assert counts == Counter(h.verdict for h in everything) and set(counts) <= set(VERDICTS)
        for sort, key in PYTHON_ORDERS.items():
            for verdict in (None, *counts):
                chosen = sorted((h for h in everything if verdict in (None, h.verdict)), key=key)
                for offset, limit in ((0, 5), (3, 50), (len(chosen), 5)):
                    page = read_models.prompt_page(org, run_id, order=SORT_ORDERS[sort], verdict=verdict,
                                                   offset=offset, limit=limit)
                    assert page == chosen[offset:offset + limit], (sort, verdict, offset)

        costs = read_models.prompt_costs(org, run_id)
        assert [c.round_number for c in costs] == list(range(1, 31))
        assert read_models.prompt_costs(org, run_id, newest=10) == costs[-10:]
        assert read_models.prompt_cost_rounds(org, run_id) == 30
        total = read_models.prompt_cost_total(org, run_id)
        for figure in fields(DeadCost):
            summed = sum(getattr(c.cost, figure.name) for c in costs)
            assert type(getattr(total, figure.name)) is type(figure.default)  # PostgreSQL's NUMERIC made an int
            assert getattr(total, figure.name) == pytest.approx(summed, rel=1e-12), figure.name
        assert read_models.prompt_cost_total(org, stack.save(name="none")) == DeadCost()  # no rounds: nothing


def test_the_migration_gives_the_histories_stored_before_it_their_mean_score(settings, monkeypatch):
    every = migrations.migration_files
    monkeypatch.setattr(migrations, "migration_files", lambda d: [p for p in every(d) if p.name != MEAN_SCORES])
    build_read_models(settings)  # a database as it was before 028
    tables = open_tables(settings)
    history = {"run_id": "r", "prompt_index": 3, "org_id": "o", "verdict": "flipping", "draws": 4, "passed_draws": 2,
               "taught_draws": 3, "first_passed": 1, "last_passed": 0, "first_round": 1, "last_round": 9,
               "score_sum": 1.7, "pass_share_sum": 2.0, "last_mean_score": 0.2, "tokens": 400, "dead_tokens": 100,
               "sampling_seconds": 2.0, "dead_seconds": 0.5}
    with tables.transaction() as tx:
        tx.upsert("prompt_histories", history)
    monkeypatch.setattr(migrations, "migration_files", every)
    assert apply_migrations(settings) == [MEAN_SCORES]
    [stored] = tables.select("prompt_histories", {"run_id": "r"}, columns=("mean_score",))
    assert stored["mean_score"] == 1.7 / 4
    close = getattr(tables, "close", None)
    if close is not None:
        close()
