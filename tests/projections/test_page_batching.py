"""A page of events is applied at once, in one transaction: the same rows as one event at a time, or nothing."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from projections.collector_pause import CollectorPauses, collector_pauses
from projections.runner import ProjectionRunner, decode
from projections.store import TableReadModels, memory_read_models


def mixed_history(stack, round_result, owner) -> int:
    """Runs through several endings, an edit, a retry and a duplicate, and a run continued with more rounds after
    its time limit stopped it; returns the last position."""
    v, org = stack.verity, stack.org_id
    for index in range(3):
        run_id = stack.save(name=f"run {index}", rounds=8)
        if index == 0:
            v.edit_run(org, run_id, v.get_run(org, run_id).settings, owner)
        v.launch_run(org, run_id, owner, "member")
        v.record_queued(run_id)
        v.record_preparing(run_id)
        for number in range(6):
            result = replace(round_result(number, 0.3 + number / 20), checkpoint_sha256="0f" * 32)
            v.record_round_scored(run_id, result)
        match index:
            case 0:
                v.record_stopped(run_id, "time_limit", "")
                v.record_adapter_ready(run_id, v.get_run(org, run_id).best_round, "a", "0" * 64, 1)
                v.continue_run(org, run_id, owner, "owner", {"rounds": 12, "time_limit_hours": 3.0})
                v.record_preparing(run_id)
                v.record_round_scored(run_id, round_result(6, 0.7))
                v.record_failed(run_id, "RuntimeError: out of memory")
            case 1:
                v.record_failed(run_id, "RuntimeError: training stopped; inspect logs")
                v.retry_run(org, run_id, owner)
                v.duplicate_run(org, run_id, owner)
            case 2:
                v.cancel_run(org, run_id, owner)
    return v.recorder.max_notification_id()


def test_a_page_applied_at_once_gives_the_rows_of_one_event_at_a_time(stack, round_result, owner):
    last = mixed_history(stack, round_result, owner)
    assert ProjectionRunner(stack.verity, stack.read_models, page_size=1000).run_once() == last
    at_once = stack.read_models.dump()
    assert all(at_once[table] for table in ("runs", "run_details", "rounds", "timeline", "feed"))

    stack.read_models.tables.clear()
    assert ProjectionRunner(stack.verity, stack.read_models, page_size=1).run_once() == last
    assert stack.read_models.dump() == at_once
    # what the continued run's early rounds said is what they said then: 8 rounds, not the 12 of the page's end
    continued = [row for row in at_once["rounds"] if row["rounds_total"] == 12]
    assert [row["round_number"] for row in continued] == [6]

    one_at_a_time, page = memory_read_models(), memory_read_models()
    runner = ProjectionRunner(stack.verity, page, page_size=1000)
    assert runner.run_once() == last
    for position in range(1, last + 1):
        [notification] = stack.verity.notification_log.select(start=position, limit=1)
        one_at_a_time.apply([decode(stack.verity, notification)])
    assert one_at_a_time.dump() == page.dump()


class FailingWrites:
    """The tables, but the page's `fail_at`-th write of a group of rows fails (after the ones before it were sent)."""

    def __init__(self, tables: Any, fail_at: int) -> None:
        self.tables, self.fail_at = tables, fail_at

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self.tables.transaction() as tx:
            yield _FailingTx(tx, self.fail_at)

    def select(self, *args: Any, **kwargs: Any) -> Any:
        return self.tables.select(*args, **kwargs)

    def clear(self) -> None:
        self.tables.clear()


class _FailingTx:
    def __init__(self, tx: Any, fail_at: int) -> None:
        self.tx, self.fail_at, self.writes = tx, fail_at, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.tx, name)

    def upsert_many(self, table: str, rows: list[dict[str, Any]]) -> None:
        self.writes += 1
        if self.writes == self.fail_at:
            raise RuntimeError("the disk went away")
        self.tx.upsert_many(table, rows)


@pytest.mark.parametrize("fail_at", [1, 4])
def test_a_failure_mid_page_leaves_neither_rows_nor_position(stack, round_result, owner, fail_at):
    run_id = stack.save(rounds=8)
    stack.runner.run_once()
    before, position = stack.read_models.dump(), stack.read_models.position()
    stack.verity.launch_run(stack.org_id, run_id, owner, "owner")
    stack.verity.record_preparing(run_id)
    for number in range(4):
        stack.verity.record_round_scored(run_id, round_result(number, 0.4))

    failing = TableReadModels(FailingWrites(stack.read_models.tables, fail_at))
    with pytest.raises(RuntimeError, match="the disk went away"):
        ProjectionRunner(stack.verity, failing).run_once()
    assert stack.read_models.position() == position
    assert stack.read_models.dump() == before

    assert stack.runner.run_once() == 6  # the page is applied whole on the next try
    assert len(stack.read_models.rounds(stack.org_id, run_id)) == 4


def test_the_cyclic_garbage_collector_runs_again_after_a_catch_up_and_stays_off_where_it_was_off(
    stack, round_result, owner
):
    # Other tests' runners may follow their logs in this process, so the switch is looked at between pages.
    runner = ProjectionRunner(stack.verity, stack.read_models, page_size=4)
    mixed_history(stack, round_result, owner)
    with collector_pauses.between_pages():
        assert gc.isenabled()
    assert runner.run_once() > 4  # several pages
    with collector_pauses.between_pages():
        assert gc.isenabled()

    stack.save(name="one more", rounds=2)
    with collector_pauses.between_pages():
        gc.disable()
    try:
        assert runner.run_once() > 0
        assert not gc.isenabled()  # what its owner turned off stays off
    finally:
        gc.enable()


def test_pages_of_two_runners_that_overlap_leave_the_collector_on():
    pauses = CollectorPauses()
    first, second = pauses.paused(), pauses.paused()
    with collector_pauses.between_pages():  # no other test's runner turns the switch meanwhile
        assert gc.isenabled()
        first.__enter__()
        second.__enter__()  # a second runner's page starts while the collector is already off
        first.__exit__(None, None, None)
        assert not gc.isenabled()  # the second page is still in flight
        second.__exit__(None, None, None)
        assert gc.isenabled()
