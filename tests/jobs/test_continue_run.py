"""Continue from round N: a run stopped by its time limit or out of memory, or cancelled, goes back on its queue as
the same run; the next launch's spec goes on from its last round's checkpoint, with the Rounds and Time limit asked
for (the limit counted from the Continue). Any other run is refused in words, and nothing is recorded."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from domain.actors import Actor
from domain.errors import IllegalTransition, NotAllowed, SettingsInvalid
from domain.runs.progress import RoundResult
from domain.runs.settings import continue_changes
from jobs.dispatch_routes import ROUTES
from jobs.specs import build_run_spec
from projections.runner import decode
from projections.timeline import sentence
from trainer.spec import ResumeFrom

if TYPE_CHECKING:
    from uuid import UUID

    from conftest import World

OWNER = Actor("person", "owner@localhost", "owner@localhost")
WORKER = Actor("system", "worker:gpu-8:77:abc", "Worker gpu-8 (process 77)")


def _scored(world: World, run_id: UUID, *numbers: int) -> None:
    for number in numbers:
        world.verity.record_round_scored(run_id, RoundResult(
            round_number=number, validation_reward=0.4 + number / 100, reward=0.4, signal=0.5, updated=True,
            checkpoint_sha256=f"{number:02d}" * 32,
        ))


def _stopped(world: World, reason: str = "time_limit") -> UUID:
    """A run of 3 rounds stopped after round 2, its best adapter kept."""
    run_id = world.training()
    _scored(world, run_id, 1, 2)
    world.verity.record_stopped(run_id, reason, "")
    world.verity.record_adapter_ready(run_id, 2, "runs/x/adapter", "ab" * 32, 10)
    return run_id


def _last_event(world: World):
    recorder = world.verity.recorder
    return decode(world.verity, recorder.select_notifications(start=recorder.max_notification_id(), limit=1)[0])


def test_a_run_stopped_by_its_time_limit_continues_from_its_last_round_with_more_rounds(world: World) -> None:
    run_id = _stopped(world)
    asked = time.time()

    world.verity.continue_run(world.org_id, run_id, OWNER, "owner", {"rounds": 6, "time_limit_hours": 3.0})

    run = world.verity.get_run(None, run_id)
    assert (run.state, run.stop, run.rounds_scored, run.total_rounds) == ("queued", None, 3, 6)
    assert run.resume_from == {"round": 2, "sha256": "02" * 32}
    continued = _last_event(world)
    assert continued.type == "Run.Continued" and ROUTES[continued.type] is ROUTES["Run.Launched"]
    assert sentence(continued, "owner@localhost", 6) == (
        "owner@localhost continued the run from round 2 (Rounds 3 → 6, Time limit (hours) 2 → 3); it went back on "
        "its queue."
    )
    spec = build_run_spec(world.verity, run, world.settings, world.ctx.config)
    assert (spec.resume, spec.rounds) == (ResumeFrom(round=2, sha256="02" * 32), 6)
    assert spec.deadline == pytest.approx(asked + 3 * 3600, abs=5)  # the new limit counts from the Continue

    world.verity.record_preparing(run_id, WORKER)
    preparing = _last_event(world)
    assert sentence(preparing, WORKER.name, 6) == (
        "The run resumed from round 2 on Worker gpu-8 (process 77): GPU, model and the checkpoint of round 2."
    )
    _scored(world, run_id, 3)  # the same run's rounds go on from 3
    run = world.verity.get_run(None, run_id)
    assert (run.rounds_scored, run.last_round, run.latest_round["round_number"]) == (4, 3, 3)


def test_a_cancelled_run_and_one_out_of_memory_continue_with_their_own_settings(world: World) -> None:
    cancelled = world.training()
    _scored(world, cancelled, 1)
    world.verity.cancel_run(world.org_id, cancelled, OWNER)
    out_of_memory = _stopped(world, "out_of_memory")

    for run_id, after in ((cancelled, 1), (out_of_memory, 2)):
        world.verity.continue_run(world.org_id, run_id, OWNER, "owner")
        run = world.verity.get_run(None, run_id)
        assert (run.state, run.resume_from["round"], run.total_rounds) == ("queued", after, 3)
        assert sentence(_last_event(world), "owner@localhost", 3) == (
            f"owner@localhost continued the run from round {after}; it went back on its queue."
        )


@pytest.mark.parametrize(
    ("make", "words"),
    [
        ("completed", "Only a run stopped by its time limit or out of memory, or a cancelled run, can be continued: "
                      "this run is Completed."),
        ("metric_failures", "Only a run stopped by its time limit or out of memory, or a cancelled run, can be "
                            "continued: this run is Adapter ready, stopped by metric failures."),
        ("failed", "Only a run stopped by its time limit or out of memory, or a cancelled run, can be continued: "
                   "this run is Failed."),
        ("no_checkpoint", "No round of this run left a checkpoint, so it can't be continued: Retry starts it from "
                          "round 1."),
        ("trial", "Only a full RL run can be continued from a round: Retry starts this one again."),
    ],
)
def test_any_other_run_is_refused_in_words_and_nothing_is_recorded(world: World, make: str, words: str) -> None:
    if make == "completed":
        run_id = world.finished("runs/x/adapter")
    elif make == "metric_failures":
        run_id = _stopped(world, "metric_failures")
    elif make == "failed":
        run_id = world.training()
        _scored(world, run_id, 1)
        world.verity.record_failed(run_id, "The trainer process stopped.")
    elif make == "no_checkpoint":
        run_id = world.training()  # cancelled before round 1 ended
        world.verity.cancel_run(world.org_id, run_id, OWNER)
    else:
        run_id = world.launched(kind="trial")
        world.verity.cancel_run(world.org_id, run_id, OWNER)
    position = world.verity.recorder.max_notification_id()

    with pytest.raises(IllegalTransition) as refused:
        world.verity.continue_run(world.org_id, run_id, OWNER, "owner")

    assert refused.value.message == words
    assert world.verity.recorder.max_notification_id() == position


def test_rounds_the_run_already_did_a_bad_setting_or_a_viewer_are_refused(world: World) -> None:
    run_id = _stopped(world)
    with pytest.raises(IllegalTransition) as too_few:
        world.verity.continue_run(world.org_id, run_id, OWNER, "owner", {"rounds": 2})
    assert too_few.value.message == (
        "This run has done 2 rounds already: to continue it, Rounds must be more than 2."
    )
    with pytest.raises(SettingsInvalid) as bad:
        continue_changes({"rounds": "0", "time_limit_hours": "soon"})
    assert bad.value.errors == {
        "rounds": "Rounds must be a whole number from 1 to 1,000.",
        "time_limit_hours": "Time limit (hours) must be a number from 0.1 to 168.",
    }
    assert continue_changes({"rounds": "", "time_limit_hours": "4"}) == {"time_limit_hours": 4.0}
    with pytest.raises(NotAllowed):
        world.verity.continue_run(world.org_id, run_id, OWNER, "viewer")
    assert world.verity.get_run(None, run_id).state == "adapter_ready"
