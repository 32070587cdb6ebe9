"""PostgreSQL takes a page's rows of a table as one statement over arrays, and stores what one row at a time did."""

from __future__ import annotations

import math

import pytest

from projections.postgres_arrays import array_types, column_arrays
from projections.tables import empty_columns
from verity.wiring import build_read_models

TYPES = {"run_id": "text", "step": "bigint", "epoch": "float8", "validation_loss": "float8", "done": "bool"}


def test_values_go_in_arrays_only_as_their_columns_take_them():
    rows = [
        {"run_id": "a", "step": 1, "epoch": 1, "validation_loss": None, "done": True},
        {"run_id": "b", "step": 2.0, "epoch": 0.5, "validation_loss": math.nan, "done": None},
    ]
    arrays = column_arrays(rows, list(rows[0]), TYPES)
    assert arrays == [["a", "b"], [1, 2], [1.0, 0.5], [None, arrays[3][1]], [True, None]]
    assert isinstance(arrays[1][1], int) and isinstance(arrays[2][0], float) and math.isnan(arrays[3][1])
    # what executemany would send for PostgreSQL to convert goes by executemany
    assert column_arrays([{"step": 2.5}], ["step"], TYPES) is None  # PostgreSQL rounds it
    assert column_arrays([{"run_id": 7}], ["run_id"], TYPES) is None
    assert column_arrays([{"epoch": "1"}], ["epoch"], TYPES) is None
    assert column_arrays([{"step": True}], ["step"], TYPES) is None
    assert column_arrays([{"unknown": 1}], ["unknown"], TYPES) is None
    # a column None in every row sends no array: the statement writes NULL (projections/tables.py: empty_columns)
    assert empty_columns([{"run_id": "a", "step": None}, {"run_id": "b", "step": None}], ["run_id", "step"]) == {
        "step"}


def step(run_id: str, number, validation_loss) -> dict:
    return {
        "run_id": run_id, "step": number, "org_id": "org", "steps": 10, "epoch": number / 10, "loss": 1,
        "validation_loss": validation_loss, "seconds": 0.25, "logged_at": "2026-12-06T00:00:00+00:00",
    }


@pytest.mark.postgres
def test_a_group_stores_what_one_row_at_a_time_stores(postgres_settings):
    tables = build_read_models(postgres_settings).tables
    groups = [
        [step("a", 1, None), step("a", 2.0, math.nan), step("a", 3, math.inf)],  # arrays
        [step("b", 1, 0.5), step("b", 2.5, 0.25)],  # a fractional step: executemany, PostgreSQL rounds it
    ]
    try:
        with tables.transaction() as tx:
            types = array_types(tx.cursor, "run_steps")
            assert [column_arrays(rows, list(rows[0]), types) is not None for rows in groups] == [True, False]
            for rows in groups:
                tx.upsert_many("run_steps", rows)
        with tables.transaction() as tx:  # one at a time, under other run ids
            for rows in groups:
                for row in rows:
                    tx.upsert_many("run_steps", [{**row, "run_id": row["run_id"] * 2}])
        stored = {
            (row["run_id"], row["step"]): row for row in tables.select("run_steps", {}, order=(("step", False),))
        }
        assert sorted(stored) == [("a", 1), ("a", 2), ("a", 3), ("aa", 1), ("aa", 2), ("aa", 3),
                                  ("b", 1), ("b", 2), ("bb", 1), ("bb", 2)]
        for (run_id, number), row in stored.items():
            if len(run_id) == 1:  # repr: NaN is not equal to itself
                assert repr(row) == repr({**stored[(run_id * 2, number)], "run_id": run_id})
        assert math.isnan(stored[("a", 2)]["validation_loss"]) and stored[("a", 3)]["validation_loss"] == math.inf
        assert stored[("b", 2)]["epoch"] == 0.25 and isinstance(stored[("a", 1)]["loss"], float)
        # a second page updates the rows in place
        with tables.transaction() as tx:
            tx.upsert_many("run_steps", [{**step("a", 1, 0.75), "loss": 2}, step("a", 2, 0.5)])
        again = {row["step"]: row for row in tables.select("run_steps", {"run_id": "a"})}
        assert (again[1]["loss"], again[1]["validation_loss"], again[2]["validation_loss"]) == (2.0, 0.75, 0.5)
    finally:
        tables.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_column_empty_in_every_row_of_a_group_is_written_as_null_over_what_was_there(backend, request):
    """Both stores write such a column as the statement's NULL rather than sending a None per row: a page that
    empties a column still empties it, and a column empty in only some rows is sent as before."""
    if backend == "postgres":
        request.applymarker(pytest.mark.postgres)
    tables = build_read_models(request.getfixturevalue(f"{backend}_settings")).tables
    try:
        with tables.transaction() as tx:
            tx.upsert_many("run_steps", [step("a", number, 0.5) for number in (1, 2, 3)])
        with tables.transaction() as tx:  # validation_loss empty in every row
            tx.upsert_many("run_steps", [{**step("a", number, None), "loss": 2} for number in (1, 2, 3)])
        stored = {row["step"]: row for row in tables.select("run_steps", {"run_id": "a"})}
        assert [(stored[n]["validation_loss"], stored[n]["loss"]) for n in (1, 2, 3)] == [(None, 2.0)] * 3
        with tables.transaction() as tx:  # empty in one row only
            tx.upsert_many("run_steps", [step("a", number, None if number == 2 else 0.25) for number in (1, 2, 3)])
        stored = {row["step"]: row for row in tables.select("run_steps", {"run_id": "a"})}
        assert [stored[n]["validation_loss"] for n in (1, 2, 3)] == [0.25, None, 0.25]
    finally:
        close = getattr(tables, "close", None)
        if close is not None:
            close()
