"""No run is left stuck: the reconciler ends runs whose worker stopped beating, with an event naming the reason,
and leaves live ones alone; a claim of a worker that died before it started a run is taken over."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from jobs.reconciler import reconcile
from jobs.service import start

if TYPE_CHECKING:
    from conftest import World


def test_a_run_whose_worker_stopped_beating_is_failed_by_the_reconciler_with_the_reason(world: World) -> None:
    run_id = world.training()
    assert world.ctx.ledger.claim(run_id, "local", "gpu-7:4242:abc", 4242, stale_after=2.0)

    assert reconcile(world.ctx) == []  # it beat just now: alive
    time.sleep(2.2)
    assert reconcile(world.ctx) == [run_id]

    run = world.verity.get_run(None, run_id)
    assert run.state == "failed"
    assert "stopped sending heartbeats" in run.failure and "Retry starts the run again from round 1" in run.failure
    assert world.ctx.ledger.lease(run_id) is None
    assert reconcile(world.ctx) == []  # a second reconciler finds nothing left to do


def test_a_live_worker_keeps_its_run(world: World) -> None:
    run_id = world.training()
    world.ctx.ledger.claim(run_id, "local", "w1", 1, stale_after=2.0)
    for _ in range(3):
        time.sleep(0.8)
        assert world.ctx.ledger.beat(run_id, "w1")
        assert reconcile(world.ctx) == []
    assert world.verity.get_run(None, run_id).state == "training"


def test_the_embedded_server_ends_at_start_up_the_runs_its_previous_process_was_training(world: World) -> None:
    run_id = world.training()
    world.ctx.ledger.claim(run_id, "local", "old-process", 99, stale_after=60.0)  # beat a moment ago

    handle = start(world.settings, world.verity, None, config=world.ctx.config)
    handle.stop()

    run = world.verity.get_run(None, run_id)
    assert run.state == "failed" and "stopped sending heartbeats" in run.failure


def test_a_queued_run_claimed_by_a_worker_that_died_before_starting_it_is_taken_over(world: World) -> None:
    run_id = world.launched()
    ledger = world.ctx.ledger
    assert ledger.claim(run_id, "local", "first", 1, stale_after=2.0)
    assert not ledger.claim(run_id, "local", "second", 2, stale_after=2.0)  # the first is alive
    time.sleep(2.2)
    assert ledger.claim(run_id, "local", "second", 2, stale_after=2.0)
    assert ledger.lease(run_id).worker_id == "second"
    assert not ledger.beat(run_id, "first")  # the first worker learns it lost the run
