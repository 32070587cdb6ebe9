"""No evaluation, reward probe or re-scoring is left live forever by a worker that died: each job claims its object
in the jobs' ledger and beats while its child runs; the reconciler fails a live one whose claim went stale (or, at
the embedded server's start-up, any earlier claim) in words, through the aggregate's own fail command, and lets the
claim go (jobs/work_claims.py, jobs/orphan_work.py)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import pytest
from prometheus_client import REGISTRY

from jobs import probes
from jobs.dispatch_routes import EVALUATION, PROBE, RESCORING
from jobs.reconciler import reconcile
from jobs.service import start
from tests.jobs.conftest import OWNER, World

NUMERIC = {"preset": "numeric", "metric": "numeric_accuracy"}
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
DEAD_WORKER, DEAD_PID = "gpu-7:4242:abc", 4242


def live_probe(world: World) -> UUID:
    """A probe its worker was sampling."""
    probe_id = world.verity.create_probe(
        world.org_id, world.project_id, name="numeric", source={"kind": "math_pairs"}, reward=NUMERIC, actor=OWNER,
        role="owner",
    ).id
    world.verity.record_probe_sampling(probe_id)
    return probe_id


def live_evaluation(world: World) -> UUID:
    """An evaluation its worker was scoring."""
    evaluation_id = world.verity.create_evaluation(
        world.org_id, world.project_id, name="Baseline", source=HELD_OUT,
        scoring={"preset": "verifiable", "format_bonus": True}, main_metric="math_pairs", actor=OWNER,
    ).id
    world.verity.record_evaluation_started(evaluation_id)
    return evaluation_id


def live_rescoring(world: World) -> UUID:
    """A re-scoring of a finished run's answers its worker was scoring."""
    run_id = world.finished(f"runs/{UUID(int=1)}/adapter")
    rescoring_id = world.verity.create_rescoring(
        world.org_id, source={"kind": "run", "id": str(run_id)}, reward={"preset": "qa", "metric": "exact_match"},
        actor=OWNER, role="owner",
    ).id
    world.verity.record_rescoring_scoring(rescoring_id)
    return rescoring_id


# kind in the ledger -> (the object in its live state, how it is read back, its noun in the message)
KINDS: dict[str, tuple[Callable[[World], UUID], Callable[[World, UUID], object], str]] = {
    PROBE: (live_probe, lambda world, work_id: world.verity.get_probe(None, work_id), "probe"),
    EVALUATION: (live_evaluation, lambda world, work_id: world.verity.get_evaluation(None, work_id), "evaluation"),
    RESCORING: (live_rescoring, lambda world, work_id: world.verity.get_rescoring(None, work_id), "re-scoring"),
}


def claimed_by_dead_worker(world: World, kind: str, work_id: UUID, stale_after: float = 2.0) -> None:
    assert world.ctx.ledger.claim(work_id, kind, DEAD_WORKER, DEAD_PID, stale_after, kind=kind)


def failed_count(kind: str) -> float:
    return REGISTRY.get_sample_value("verity_reconciler_actions_total", {"action": f"failed_{kind}"}) or 0.0


@pytest.mark.parametrize("kind", [PROBE, EVALUATION, RESCORING])
def test_live_work_whose_worker_stopped_beating_is_failed_in_words_and_its_claim_released(
    world: World, kind: str
) -> None:
    make, read, noun = KINDS[kind]
    work_id = make(world)
    claimed_by_dead_worker(world, kind, work_id)
    assert world.ctx.ledger.leases() == []  # the runs' rows only: the queues' figures and the run path see none
    reconcile(world.ctx)
    assert read(world, work_id).state != "failed"  # it beat just now: alive

    beat_at = world.ctx.ledger.lease(work_id).beat_at
    counted = failed_count(kind)
    time.sleep(2.2)
    assert reconcile(world.ctx) == []  # it ended no run

    work = read(world, work_id)
    at = datetime.fromtimestamp(beat_at, UTC).strftime("%H:%M:%S UTC")
    assert (work.state, work.failure) == ("failed", (
        f"The worker running this {noun} ({socket.gethostname()}, process {DEAD_PID}) stopped sending heartbeats at "
        f"{at}: it stopped or lost its connection, so the reconciler ended the {noun}. Start it again."
    ))
    failed = list(world.verity.repository.event_store.get(work_id))[-1]
    assert failed.actor["id"] == "reconciler"
    assert world.ctx.ledger.lease(work_id) is None
    assert failed_count(kind) == counted + 1
    reconcile(world.ctx)  # a second reconciler finds nothing left to do
    assert failed_count(kind) == counted + 1


def test_a_queued_probe_claimed_by_a_worker_that_died_before_it_started_sampling_is_failed(world: World) -> None:
    probe_id = world.verity.create_probe(
        world.org_id, world.project_id, name="numeric", source={"kind": "math_pairs"}, reward=NUMERIC, actor=OWNER,
        role="owner",
    ).id
    claimed_by_dead_worker(world, PROBE, probe_id)
    time.sleep(2.2)
    reconcile(world.ctx)
    probe = world.verity.get_probe(None, probe_id)
    assert probe.state == "failed" and "stopped sending heartbeats" in probe.failure
    assert world.ctx.ledger.lease(probe_id) is None


def test_work_whose_worker_keeps_beating_is_left_alone(world: World) -> None:
    claims = {kind: KINDS[kind][0](world) for kind in KINDS}
    for kind, work_id in claims.items():
        assert world.ctx.ledger.claim(work_id, kind, "w1", 1, 2.0, kind=kind)
    for _ in range(3):
        time.sleep(0.8)
        for work_id in claims.values():
            assert world.ctx.ledger.beat(work_id, "w1")
        reconcile(world.ctx)
    for kind, work_id in claims.items():
        assert KINDS[kind][1](world, work_id).state in ("sampling", "running", "scoring")
        assert world.ctx.ledger.lease(work_id).worker_id == "w1"


def test_work_that_ended_before_its_worker_stopped_beating_keeps_its_ending_and_loses_its_claim(world: World) -> None:
    probe_id, evaluation_id, rescoring_id = live_probe(world), live_evaluation(world), live_rescoring(world)
    world.verity.record_probe_failed(probe_id, "The reward raised an error.")
    world.verity.cancel_evaluation(world.org_id, evaluation_id, OWNER)
    world.verity.record_rescoring_failed(rescoring_id, "The answers file is gone.")
    for kind, work_id in ((PROBE, probe_id), (EVALUATION, evaluation_id), (RESCORING, rescoring_id)):
        claimed_by_dead_worker(world, kind, work_id)
    time.sleep(2.2)
    reconcile(world.ctx)

    assert world.verity.get_probe(None, probe_id).failure == "The reward raised an error."
    assert world.verity.get_evaluation(None, evaluation_id).state == "cancelled"
    assert world.verity.get_rescoring(None, rescoring_id).failure == "The answers file is gone."
    assert world.ctx.ledger.work_leases() == []


def test_the_embedded_server_ends_at_start_up_the_work_its_previous_process_was_doing(world: World) -> None:
    claims = {kind: KINDS[kind][0](world) for kind in KINDS}
    for kind, work_id in claims.items():
        claimed_by_dead_worker(world, kind, work_id, stale_after=60.0)  # beat a moment ago

    handle = start(world.settings, world.verity, None, config=world.ctx.config)
    handle.stop()

    for kind, work_id in claims.items():
        work = KINDS[kind][1](world, work_id)
        assert work.state == "failed" and f"so the reconciler ended the {KINDS[kind][2]}" in work.failure
    assert world.ctx.ledger.work_leases() == []


@pytest.mark.slow
def test_a_probe_job_holds_its_claim_and_beats_while_its_process_samples_then_lets_go(
    world: World, tiny_model_dir: Path
) -> None:
    world.settings.models_dir.mkdir(parents=True, exist_ok=True)
    world.settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    probe_id = world.verity.create_probe(
        world.org_id, world.project_id, name="small", source={"kind": "math_pairs"}, reward=NUMERIC, actor=OWNER,
        role="owner", prompts=4, answers_per_prompt=2, max_answer_tokens=16,
    ).id
    job = threading.Thread(target=probes.run_probe, args=(world.ctx, probe_id), daemon=True)
    job.start()

    seen = []  # the probe's row as the test reads it while the job runs
    deadline = time.monotonic() + 180
    while job.is_alive() and time.monotonic() < deadline:
        lease = world.ctx.ledger.lease(probe_id)
        if lease is not None:
            seen.append(lease)
        time.sleep(0.02)
    job.join(timeout=1)

    assert not job.is_alive(), "the probe job did not end"
    assert seen, "the job never claimed the probe"
    assert {(lease.kind, lease.worker_id, lease.pid) for lease in seen} == {(PROBE, world.ctx.worker_id,
                                                                            seen[0].pid)}
    assert max(lease.beat_at for lease in seen) > seen[0].claimed_at  # the supervisor beat while the child ran
    probe = world.verity.get_probe(None, probe_id)
    assert probe.state == "scored", probe.failure
    assert world.ctx.ledger.lease(probe_id) is None  # let go once the score was recorded
