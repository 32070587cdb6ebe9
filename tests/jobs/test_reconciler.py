"""No run is left stuck: the reconciler ends runs whose worker stopped beating, with an event naming the reason,
and leaves live ones alone; a claim of a worker that died before it started a run is taken over."""

from __future__ import annotations

import hashlib
import json
import struct
import time
from typing import TYPE_CHECKING

from domain.runs.progress import RoundResult
from jobs.reconciler import KEPT_ADAPTER_NOTE, reconcile
from jobs.service import start
from projections.runner import decode
from projections.timeline import sentence

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


def write_adapter(world: World, run_id, cut_short: bool = False) -> bytes:
    """What the trainer writes: a config and a safetensors file (8-byte header length, JSON header, tensors)."""
    header = json.dumps({"lora_A": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    weights = struct.pack("<Q", len(header)) + header + bytes(range(16))
    folder = world.settings.local_storage_dir / "runs" / str(run_id) / "adapter"
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text("{}")
    (folder / "adapter_model.safetensors").write_bytes(weights[:-5] if cut_short else weights)
    return weights


def stopped_while_saving(world: World):
    run_id = world.training()
    world.verity.record_round_scored(
        run_id, RoundResult(round_number=1, validation_reward=0.5, reward=0.4, signal=0.5, updated=True)
    )
    world.verity.record_stopped(run_id, "time_limit", "")
    world.ctx.ledger.claim(run_id, "local", "gone", 7, stale_after=2.0)
    return run_id


def test_a_run_whose_worker_died_after_saving_its_adapter_keeps_it(world: World) -> None:
    run_id = stopped_while_saving(world)
    weights = write_adapter(world, run_id)
    time.sleep(2.2)

    assert reconcile(world.ctx) == [run_id]

    run = world.verity.get_run(None, run_id)
    assert run.state == "adapter_ready" and run.adapter["best_round"] == 1
    assert run.adapter["sha256"] == hashlib.sha256(weights).hexdigest() and run.adapter["size_bytes"] == len(weights)
    # the timeline says why the run kept its adapter, and who kept it
    recorder = world.verity.recorder
    kept = decode(world.verity, recorder.select_notifications(start=recorder.max_notification_id(), limit=1)[0])
    assert (kept.type, kept.actor["name"], kept.data["note"]) == ("Run.AdapterReady", "Reconciler", KEPT_ADAPTER_NOTE)
    line = sentence(kept, "Reconciler", run.total_rounds)
    assert line.endswith("stopped sending heartbeats after the adapter was saved whole; the run keeps it "
                         "(checksum and size read from the storage).")


def test_an_adapter_cut_short_is_not_kept_and_the_run_fails(world: World) -> None:
    run_id = stopped_while_saving(world)
    write_adapter(world, run_id, cut_short=True)
    time.sleep(2.2)

    assert reconcile(world.ctx) == [run_id]

    assert world.verity.get_run(None, run_id).state == "failed"


def test_a_run_that_ended_while_its_worker_finishes_keeps_that_workers_claim(world: World) -> None:
    """The trainer says how the run ended, then writes its last rollouts and exits: the reconciler must not take
    the claim away meanwhile (the worker would read that as the run taken from it and kill the trainer)."""
    run_id = world.training()
    world.ctx.ledger.claim(run_id, "local", "w1", 1, stale_after=2.0)
    world.verity.record_failed(run_id, "the trainer said so")
    assert reconcile(world.ctx) == []
    assert world.ctx.ledger.beat(run_id, "w1")  # still its own
    time.sleep(2.2)  # the worker died before it let go: the stale claim goes
    reconcile(world.ctx)
    assert world.ctx.ledger.lease(run_id) is None
