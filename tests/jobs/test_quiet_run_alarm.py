"""The run going quiet (issue 21): the reconciler, reading the jobs' real ledger, raises the alarm on a training run
of which nothing was heard, neither a round nor its worker's heartbeat, for longer than its slowest round x 3; a
beating worker keeps it away, it is raised once, and the next round clears it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING
from uuid import UUID

from domain.runs import alarms
from domain.runs.progress import RoundResult
from jobs.reconciler import reconcile
from projections.runner import decode
from projections.timeline import sentence

if TYPE_CHECKING:
    from conftest import World

SLOWEST = 0.3  # round 0's validation: the quiet limit is 0.9 s, under the test's 2 s stale limit


def timed_training(world: World) -> UUID:
    run_id = world.launched()
    world.verity.record_preparing(run_id)
    world.verity.record_round_scored(run_id, RoundResult(round_number=0, validation_reward=0.4,
                                                         validation_seconds=SLOWEST))
    return run_id


def run_events(world: World, run_id: UUID) -> list:
    recorder = world.verity.recorder
    notifications = recorder.select_notifications(start=1, limit=1000)
    return [decode(world.verity, n) for n in notifications if n.originator_id == run_id]


def test_a_beating_worker_keeps_the_alarm_away(world: World) -> None:
    run_id = timed_training(world)
    world.ctx.ledger.claim(run_id, "local", "w1", 1, stale_after=2.0)
    for _ in range(3):
        time.sleep(0.5)
        assert world.ctx.ledger.beat(run_id, "w1")
        reconcile(world.ctx)
    assert world.verity.get_run(None, run_id).alarms == {}


def test_a_run_heard_of_for_longer_than_its_slowest_round_x_3_raises_the_quiet_alarm_once(world: World) -> None:
    run_id = timed_training(world)
    world.ctx.ledger.claim(run_id, "local", "w1", 1, stale_after=2.0)
    assert reconcile(world.ctx) == []
    assert world.verity.get_run(None, run_id).alarms == {}  # just heard

    time.sleep(1.2)  # past 3 x 0.3 s, before the 2 s stale limit: quiet, not yet an orphan
    assert reconcile(world.ctx) == []
    reconcile(world.ctx)  # a second pass (or a second reconciler) raises nothing more
    run = world.verity.get_run(None, run_id)
    assert (run.state, run.alarms) == ("training", {alarms.QUIET: 0})
    [raised] = [e for e in run_events(world, run_id) if e.type == "Run.AlarmRaised"]
    assert raised.data["kind"] == alarms.QUIET and raised.actor["name"] == "Reconciler"
    assert raised.data["seen"].startswith("No round and no heartbeat for 1 s (since ")
    line = sentence(raised, "Reconciler", run.total_rounds)
    assert line.startswith("Alarm after round 0 — The run went quiet: No round and no heartbeat for ")
    assert "Cancel run stops it now." in line

    world.verity.record_round_scored(run_id, RoundResult(round_number=1, validation_reward=0.5, reward=0.5,
                                                         signal=0.5, updated=True))
    assert world.verity.get_run(None, run_id).alarms == {}
    cleared = run_events(world, run_id)[-1]
    assert cleared.type == "Run.AlarmCleared"
    assert sentence(cleared, "Trainer", 3) == "The alarm “The run went quiet” cleared after round 1: a round came."


def test_a_dead_worker_s_run_says_it_went_quiet_before_the_reconciler_ends_it(world: World) -> None:
    run_id = timed_training(world)
    world.ctx.ledger.claim(run_id, "local", "gone", 7, stale_after=2.0)
    time.sleep(2.2)
    assert reconcile(world.ctx) == [run_id]
    types = [e.type for e in run_events(world, run_id)]
    assert types[-2:] == ["Run.AlarmRaised", "Run.Failed"]  # round 0 left no checkpoint: it fails


def test_a_run_of_quick_rounds_is_not_quiet_between_two_heartbeats(world: World) -> None:
    """Rounds of 0.1 s (a limit of 0.3 s) and heartbeats every 0.2 s: the limit is two heartbeats, 0.4 s."""
    run_id = world.launched()
    world.verity.record_preparing(run_id)
    world.verity.record_round_scored(run_id, RoundResult(round_number=0, validation_reward=0.4,
                                                         validation_seconds=0.1))
    world.ctx.ledger.claim(run_id, "local", "w1", 1, stale_after=2.0)
    time.sleep(0.35)
    reconcile(world.ctx)
    assert world.verity.get_run(None, run_id).alarms == {}
    time.sleep(0.2)
    reconcile(world.ctx)
    assert world.verity.get_run(None, run_id).alarms == {alarms.QUIET: 0}
