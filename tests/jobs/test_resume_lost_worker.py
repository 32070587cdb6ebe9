"""A run whose worker is lost after a round that left a checkpoint is not ended: the reconciler puts it back on its
queue (Run.Resumed, in the timeline's words), and the next launch's spec continues from that round's checkpoint.
The same round is resumed at most three times; then the run fails and says why."""

from __future__ import annotations

import socket
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from domain.actors import Actor
from domain.runs.progress import RoundResult
from domain.runs.run_resume import MAX_RESUMES_OF_A_ROUND
from domain.runs.settings import run_body_from_api
from jobs.reconciler import reconcile
from jobs.specs import build_run_spec
from projections.runner import decode
from projections.timeline import sentence
from trainer.spec import ResumeFrom

if TYPE_CHECKING:
    from conftest import World

CHECKPOINT_2 = "02" * 32
LOST_AFTER = 0.3  # seconds without a heartbeat before a worker is taken for lost


def _scored(world: World, run_id, *numbers: int, checkpoint: bool = True) -> None:
    for number in numbers:
        world.verity.record_round_scored(run_id, RoundResult(
            round_number=number, validation_reward=0.4, reward=0.4, signal=0.5, updated=True,
            checkpoint_sha256=f"{number:02d}" * 32 if checkpoint else None,
        ))


def _lost(world: World, run_id) -> list:
    """The run's worker claims it, then stops beating; one reconciler pass → what it ended."""
    if world.verity.get_run(None, run_id).state == "queued":  # a resumed run: the next worker takes it
        world.verity.record_preparing(run_id)
    assert world.ctx.ledger.claim(run_id, "local", "gpu-7:4242:abc", 4242, stale_after=LOST_AFTER)
    time.sleep(LOST_AFTER + 0.1)
    return reconcile(replace(world.ctx, config=replace(world.ctx.config, stale_after_seconds=LOST_AFTER)))


def _last_event(world: World):
    recorder = world.verity.recorder
    return decode(world.verity, recorder.select_notifications(start=recorder.max_notification_id(), limit=1)[0])


def test_a_lost_worker_after_a_checkpointed_round_puts_the_run_back_on_its_queue_to_resume(world: World) -> None:
    run_id = world.training()
    _scored(world, run_id, 1, 2)

    assert _lost(world, run_id) == []  # not ended

    run = world.verity.get_run(None, run_id)
    assert run.state == "queued" and run.rounds_scored == 3  # round 0, 1 and 2 stay
    assert run.resume_from == {"round": 2, "sha256": CHECKPOINT_2}
    assert world.ctx.ledger.lease(run_id) is None  # free for the next worker
    resumed = _last_event(world)
    assert (resumed.type, resumed.actor["name"]) == ("Run.Resumed", "Reconciler")
    assert sentence(resumed, "Reconciler", run.total_rounds) == (
        f"The worker running this run ({socket.gethostname()}, process 4242) stopped after round 2; the run went "
        "back on its queue to resume from round 2."
    )
    spec = build_run_spec(world.verity, run, world.settings, world.ctx.config)
    assert spec.resume == ResumeFrom(round=2, sha256=CHECKPOINT_2)


def test_the_same_round_resumes_three_times_then_the_run_fails_and_says_why(world: World) -> None:
    run_id = world.training()
    _scored(world, run_id, 1)
    for _ in range(MAX_RESUMES_OF_A_ROUND):
        assert _lost(world, run_id) == []
        assert world.verity.get_run(None, run_id).state == "queued"

    assert _lost(world, run_id) == [run_id]

    run = world.verity.get_run(None, run_id)
    assert run.state == "failed"
    assert ("It was resumed from round 1 3 times and its worker was lost each time, so it was not resumed again. "
            "Retry starts the run again from round 1.") in run.failure


def test_a_later_round_resumes_afresh(world: World) -> None:
    run_id = world.training()
    _scored(world, run_id, 1)
    for _ in range(MAX_RESUMES_OF_A_ROUND):
        assert _lost(world, run_id) == []
    world.verity.record_preparing(run_id)
    _scored(world, run_id, 2)  # the resumed run got further

    assert _lost(world, run_id) == []
    assert world.verity.get_run(None, run_id).resume_from == {"round": 2, "sha256": CHECKPOINT_2}


def test_a_run_lost_before_any_checkpoint_fails_as_before(world: World) -> None:
    run_id = world.training()
    _scored(world, run_id, 1, checkpoint=False)  # a trainer that wrote no checkpoint

    assert _lost(world, run_id) == [run_id]

    run = world.verity.get_run(None, run_id)
    assert run.state == "failed" and "Rounds after round 1 were lost" in run.failure and not run.resumes


def test_an_sft_run_lost_after_an_epoch_resumes_from_it_and_redoes_the_steps_after_it(world: World, tmp_path) -> None:
    from dataset_versions import speeds_version

    from jobs.recording import ProgressRecorder
    from jobs.tune_specs import build_tune_spec
    from trainer import progress

    owner = Actor("person", "owner@localhost", "owner@localhost")
    draft = run_body_from_api({"name": "sft", "dataset_version": speeds_version(world, tmp_path),
                               "training": {"objective": "sft"}})
    run_id = world.verity.save_run(world.org_id, world.project_id, draft, owner).id
    world.verity.launch_run(world.org_id, run_id, owner, "owner")
    world.verity.record_preparing(run_id)
    recorder = ProgressRecorder(world.verity, run_id)
    for record in (  # epoch 1 ends at step 2 with its checkpoint; step 3 is logged, then the worker is lost
        progress.StepLogged(1, 6, 0.5, 2.0, 1.0),
        progress.StepLogged(2, 6, 1.0, 1.5, 2.0, validation_loss=1.4, checkpoint_sha256="02" * 32),
        progress.StepLogged(3, 6, 1.5, 1.2, 3.0),
    ):
        recorder.record(record)

    assert _lost(world, run_id) == []

    run = world.verity.get_run(None, run_id)
    assert (run.state, [step["step"] for step in run.steps]) == ("queued", [1, 2])  # step 3 is redone
    assert sentence(_last_event(world), "Reconciler", run.total_rounds, "sft") == (
        f"The worker running this run ({socket.gethostname()}, process 4242) stopped after step 2; the run went "
        "back on its queue to resume from step 2."
    )
    spec = build_tune_spec(world.verity, run, world.settings, world.ctx.config)
    assert spec.resume == ResumeFrom(round=2, sha256="02" * 32)
    world.verity.record_preparing(run_id)
    assert sentence(_last_event(world), "Worker gpu-8 (process 77)", run.total_rounds, "sft") == (
        "The run resumed from step 2 on Worker gpu-8 (process 77): GPU, model and the checkpoint of step 2."
    )
    recorder.record(progress.StepLogged(3, 6, 1.5, 1.1, 2.5))  # the redone step is taken
    assert [step["loss"] for step in world.verity.get_run(None, run_id).steps] == [2.0, 1.5, 1.1]


def test_a_trial_is_never_resumed(world: World) -> None:
    run_id = world.launched(kind="trial")
    world.verity.record_preparing(run_id)
    _scored(world, run_id, 0)

    assert _lost(world, run_id) == [run_id]
    assert world.verity.get_run(None, run_id).state == "failed"


def test_a_resumed_runs_message_sent_at_once_keeps_its_row_in_the_ledger(world: World, monkeypatch) -> None:
    """The dispatcher (in any process) may send the resumed run before the reconciler's pass is over: the row it
    writes for the message is not the lost worker's claim, and stays, so no reconciler sends the run twice."""
    run_id = world.training()
    _scored(world, run_id, 1)
    record_resumed = world.verity.record_resumed

    def resumed_and_sent_at_once(*args, **kwargs):
        record_resumed(*args, **kwargs)
        world.ctx.ledger.enqueued(run_id, "local")  # what the dispatcher's send notes, as soon as it may

    monkeypatch.setattr(world.verity, "record_resumed", resumed_and_sent_at_once)
    assert _lost(world, run_id) == []

    lease = world.ctx.ledger.lease(run_id)
    assert lease is not None and lease.worker_id is None and lease.enqueued_at is not None


def test_a_run_queued_by_an_event_the_dispatcher_has_yet_to_send_is_left_to_it(world: World) -> None:
    from migrations import apply_migrations
    from projections.runner import ProjectionRunner
    from verity.wiring import build_read_models

    apply_migrations(world.settings)
    world.ctx.read_models = build_read_models(world.settings, migrate=False)
    run_id = world.training()
    _scored(world, run_id, 1)
    ProjectionRunner(world.verity, world.ctx.read_models).run_once()  # the read models show it training
    before_resume = world.verity.recorder.max_notification_id()
    assert _lost(world, run_id) == []  # Resumed: Queued, and its message is the dispatcher's to send
    sent: list = []

    reconcile(world.ctx, sent.append, sent_to=lambda: before_resume)
    assert sent == []  # the dispatcher is behind the Resumed event: not sent from here as well

    reconcile(world.ctx, sent.append, sent_to=world.verity.recorder.max_notification_id)
    assert sent == [run_id]  # the dispatcher went past it and no message is in the ledger: it was lost, so sent
