"""An RL run's life: saved, launched, trained round by round, stopped or finished; and what is refused."""

from __future__ import annotations

from uuid import uuid4

import pytest

from domain.actors import Actor
from domain.errors import ConcurrentChange, IllegalTransition, NotAllowed, NotFound, SettingsInvalid
from domain.runs import messages
from domain.runs.progress import TrialReport

COMMANDS = [
    "edit",
    "delete",
    "launch",
    "cancel",
    "retry",
    "queued",
    "preparing",
    "round",
    "saving",
    "stopped",
    "adapter_ready",
    "completed",
    "failed",
]
LEGAL = {
    "draft": {"edit", "delete", "launch"},
    "queued": {"cancel", "queued", "preparing", "failed"},
    "preparing": {"cancel", "round", "failed"},
    "training": {"cancel", "round", "saving", "stopped", "adapter_ready", "failed"},
    "saving_adapter": {"cancel", "adapter_ready", "failed"},
    "adapter_ready": {"completed"},
    "completed": set(),
    "failed": {"retry"},
    "cancelled": {"retry"},
}


def run_in_state(world, state):
    v, owner = world.verity, Actor("person", "owner@localhost", "owner@localhost")
    if state == "draft":
        return world.saved()
    if state in ("queued", "failed", "cancelled"):
        run_id = world.launched()
        if state == "failed":
            v.record_failed(run_id, "RuntimeError: training stopped; inspect logs")
        if state == "cancelled":
            v.cancel_run(world.org_id, run_id, owner)
        return run_id
    if state == "preparing":
        return world.training(rounds_scored=0)
    if state in ("training", "saving_adapter"):
        run_id = world.training(rounds_scored=2)
        if state == "saving_adapter":
            v.record_saving_adapter(run_id)
        return run_id
    run_id = world.adapter_ready()
    if state == "completed":
        v.record_completed(run_id)
    return run_id


def command(world, name, run_id, draft, scored):
    v, owner = world.verity, Actor("person", "owner@localhost", "owner@localhost")
    run = v.get_run(world.org_id, run_id)
    actions = {
        "edit": lambda: v.edit_run(world.org_id, run_id, draft(), owner),
        "delete": lambda: v.delete_run(world.org_id, run_id, owner),
        "launch": lambda: v.launch_run(world.org_id, run_id, owner, "owner"),
        "cancel": lambda: v.cancel_run(world.org_id, run_id, owner),
        "retry": lambda: v.retry_run(world.org_id, run_id, owner),
        "queued": lambda: v.record_queued(run_id),
        "preparing": lambda: v.record_preparing(run_id),
        "round": lambda: v.record_round_scored(run_id, scored(run.rounds_scored, 0.9)),
        "saving": lambda: v.record_saving_adapter(run_id),
        "stopped": lambda: v.record_stopped(run_id, "time_limit", ""),
        "adapter_ready": lambda: v.record_adapter_ready(run_id, run.best_round or 0, "a", "b", 1),
        "completed": lambda: v.record_completed(run_id),
        "failed": lambda: v.record_failed(run_id, "boom"),
    }
    return actions[name]()


@pytest.mark.parametrize("state", list(LEGAL))
def test_every_command_is_legal_in_its_states_and_refused_in_every_other(world, state, draft, scored):
    for name in COMMANDS:
        run_id = run_in_state(world, state)
        if name in LEGAL[state]:
            command(world, name, run_id, draft, scored)
        else:
            with pytest.raises(IllegalTransition) as refused:
                command(world, name, run_id, draft, scored)
            assert refused.value.message, (state, name)


def test_a_full_run_from_draft_to_completed(world, owner, draft, scored):
    v = world.verity
    saved = v.save_run(world.org_id, world.project_id, draft(rounds=3), owner)
    assert v.get_run(world.org_id, saved.id).status == "Draft"
    v.edit_run(world.org_id, saved.id, draft(rounds=2), owner)
    launched = v.launch_run(world.org_id, saved.id, owner, "member")
    assert launched.position > saved.position
    run = v.get_run(world.org_id, saved.id)
    assert (run.status, run.total_rounds) == ("Queued", 2)
    v.record_queued(saved.id)
    v.record_preparing(saved.id)
    assert v.get_run(world.org_id, saved.id).status == "Preparing"
    v.record_round_scored(saved.id, scored(0, 0.30))
    v.record_round_scored(saved.id, scored(1, 0.47))
    assert v.get_run(world.org_id, saved.id).status == "Training · round 2 / 2"
    v.record_round_scored(saved.id, scored(2, 0.47))  # a tie goes to the earlier round
    with pytest.raises(IllegalTransition, match="has 2 rounds"):
        v.record_round_scored(saved.id, scored(3, 0.9))
    v.record_saving_adapter(saved.id)
    with pytest.raises(IllegalTransition, match="round 1's"):
        v.record_adapter_ready(saved.id, 2, "runs/x/adapter", "ab" * 32, 10)
    v.record_adapter_ready(saved.id, 1, "runs/x/adapter", "ab" * 32, 10)
    v.record_completed(saved.id)
    run = v.get_run(world.org_id, saved.id)
    assert (run.status, run.best_round, run.adapter["location"]) == ("Completed", 1, "runs/x/adapter")


def test_rounds_come_in_order(world, scored):
    run_id = world.training(rounds_scored=1)
    with pytest.raises(IllegalTransition, match="next round of this run is round 1"):
        world.verity.record_round_scored(run_id, scored(2, 0.5))


def test_a_vision_model_is_refused_with_the_documents_words(make_world, owner, draft):
    world = make_world(vision=True)
    with pytest.raises(SettingsInvalid) as refused:
        world.verity.save_run(world.org_id, world.project_id, draft(), owner)
    assert refused.value.errors[""] == (
        "RL trains text models. tiny-math is a vision model: choose SFT or DPO, or a text model."
    )


def test_a_draft_saves_on_any_plan_but_launching_needs_pro_and_a_member(make_world, owner, draft):
    world = make_world(plan="free")
    run_id = world.saved()
    with pytest.raises(NotAllowed) as refused:
        world.verity.launch_run(world.org_id, run_id, owner, "owner")
    assert refused.value.message == (
        "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."
    )
    world.verity.set_plan(world.org_id, "pro", owner)
    with pytest.raises(NotAllowed, match="member or owner role"):
        world.verity.launch_run(world.org_id, run_id, owner, "viewer")
    world.verity.launch_run(world.org_id, run_id, owner, "member")


def test_the_reward_is_required_and_checked(world, owner, draft):
    def errors(kind, reward):
        with pytest.raises(SettingsInvalid) as refused:
            world.verity.save_run(world.org_id, world.project_id, draft(kind, reward=reward), owner)
        return refused.value.errors

    assert errors("trial", None) == {"reward": "Choose a reward for RL: the metric that scores each sampled answer."}
    assert "no baseline yet" in errors("full", None)["reward"]
    assert "LLM judge" in errors("full", {"preset": "qa", "metric": "llm_judge"})["reward"]
    run = world.verity.get_run(world.org_id, world.saved(reward={"preset": "qa", "metric": "token_f1"}))
    assert run.settings.reward["labels"] == []  # a saved run holds the full reward


def test_start_from_must_be_a_finished_full_run_with_an_adapter_and_inherits_its_adapter_shape(world, owner, draft):
    source = world.adapter_ready(lora_rank=8, lora_alpha=16)
    run = world.verity.get_run(world.org_id, world.saved(start_run=str(source)))
    assert run.settings.lora_rank == 8
    assert run.settings.lora_alpha == 16

    def refusal(start_run):
        with pytest.raises(SettingsInvalid) as refused:
            world.verity.save_run(world.org_id, world.project_id, draft(start_run=start_run), owner)
        return refused.value.errors["start_run"]

    assert "finished run with an adapter" in refusal(str(world.training()))
    assert "a trial" in refusal(str(world.training(kind="trial")))
    assert refusal(str(uuid4())) == "Start from must be a run of this project."


def test_a_stop_keeps_the_best_adapter_so_far_and_has_no_retry(world, owner, scored):
    v = world.verity
    run_id = world.training(rounds_scored=1)  # only round 0: a failure in round 1
    note = messages.sampling_memory_note(8, 512)
    v.record_stopped(run_id, "out_of_memory", note)
    run = v.get_run(world.org_id, run_id)
    assert (run.status, run.stop["after_round"], run.stop["best_round"]) == ("Saving adapter", 0, 0)
    assert (
        messages.stopped_line("out_of_memory", 0, 20, 0) == "Stopped after round 0 of 20: out of memory · best round 0"
    )
    v.record_adapter_ready(run_id, 0, "runs/a", "c" * 64, 5)
    with pytest.raises(IllegalTransition, match="no Retry"):
        v.retry_run(world.org_id, run_id, owner)


def test_a_run_cannot_stop_before_round_0_and_a_trial_never_stops(world):
    with pytest.raises(IllegalTransition, match="record a failure instead"):
        world.verity.record_stopped(world.training(rounds_scored=0), "time_limit", "")
    with pytest.raises(IllegalTransition, match="trial"):
        world.verity.record_stopped(world.training(kind="trial"), "metric_failures", "")


def test_no_learning_signal_fails_the_run_instead_of_completing(world, scored):
    v = world.verity
    run_id = world.training(rounds=2, rounds_scored=1)
    v.record_round_scored(run_id, scored(1, 0.3, signal=0.0, reward=0.0))
    v.record_round_scored(run_id, scored(2, 0.3, signal=0.0, reward=0.0))
    v.record_saving_adapter(run_id)
    run = v.get_run(world.org_id, run_id)
    assert run.status == "Failed"
    assert run.failure == (
        "RL found no learning signal in rounds 1-2: every answer to every prompt scored the same "
        "(0). Start from an SFT adapter, give partial credit in the reward, or check the reward."
    )


def test_retry_makes_a_new_launched_run_linked_to_the_old_and_duplicate_a_new_draft(world, owner):
    v = world.verity
    failed = world.launched()
    v.record_failed(failed, "boom")
    retry = v.retry_run(world.org_id, failed, owner)
    old, new = v.get_run(world.org_id, failed), v.get_run(world.org_id, retry.id)
    assert (old.retried_as, new.retry_of, new.status, new.settings) == (
        retry.id,
        failed,
        "Queued",
        old.settings,
    )
    with pytest.raises(IllegalTransition, match="already retried"):
        v.retry_run(world.org_id, failed, owner)
    copy = v.get_run(world.org_id, v.duplicate_run(world.org_id, failed, owner).id)
    # the same settings, named after the source (Duplicate names the copy "<name> (copy)")
    assert (copy.status, copy.duplicate_of, copy.settings) == (
        "Draft", failed, old.settings.with_values(name="math (copy)"))


def test_a_trial_reports_and_completes_without_an_adapter(world):
    v = world.verity
    run_id = world.training(kind="trial", rounds_scored=2)
    v.record_trial_report(run_id, TrialReport(finished=True, seconds_per_round=12.0))
    v.record_completed(run_id)
    assert v.get_run(world.org_id, run_id).status == "Completed"


def test_another_organization_sees_nothing(world, make_world, owner):
    run_id = world.saved()
    other = make_world()
    other_org = other.verity.create_organization("Other", "pro", owner).id
    world.verity.create_organization("Other", "pro", owner)
    with pytest.raises(NotFound):
        world.verity.launch_run(other_org, run_id, owner, "owner")
    assert world.verity.get_run(None, run_id).org_id == world.org_id


def test_two_writers_of_one_run_never_both_win(world, scored):
    v = world.verity
    run_id = world.training(rounds_scored=1)
    first, second = v.get_run(None, run_id), v.get_run(None, run_id)
    first.cancel({"kind": "person", "id": "a", "name": "a"})
    second.score_round(scored(1, 0.5).to_dict(), {"kind": "system", "id": "t", "name": "t"})
    v._save(first)
    with pytest.raises(ConcurrentChange):
        v._save(second)
    assert v.get_run(None, run_id).status == "Cancelled"


def test_the_words_of_a_round_and_of_a_stop():
    result = {
        "round_number": 3,
        "reward": 0.41,
        "signal": 0.62,
        "cut_off": 0.02,
        "metric_failures": 1,
        "updated": False,
        "loss": 0.012,
        "validation_reward": 0.47,
        "sampling_seconds": 81.2,
        "grading_seconds": 2.1,
        "update_seconds": 64.0,
        "validation_seconds": 9.5,
    }
    assert messages.round_log_line(result, 20, 3) == (
        "Round 3 of 20: reward 0.4100, signal 62%, cut off 2%, 1 metric failure, not updated, loss 0.0120, "
        "validation reward 0.4700 (best round 3); seconds: sampling 81.2, grading 2.1, update 64.0, validation 9.5."
    )
    assert messages.metric_failures_note("exact_year (v3)", 9, 64, 4, ["execution", "result"]) == (
        "Custom metric exact_year (v3) failed on 9 of 64 answers in round 4: execution, result. "
        "Make it handle any text."
    )
    assert messages.training_memory_note(1, 512) == (
        "Training on a micro batch of 1 answers of up to 512 tokens does not fit in this GPU's memory. Choose a GPU "
        "with more memory or a shorter longest sampled answer."
    )
    assert ", a smaller micro batch size or" in messages.training_memory_note(4, 512)
    assert messages.sampling_memory_note(8, 512) == (
        "Sampling 8 answers of up to 512 tokens does not fit in this GPU's memory. Choose a GPU with more memory, "
        "fewer answers per prompt or a shorter longest sampled answer."
    )
    assert messages.stopped_log_line("out_of_memory", 4, 20, 2) == (
        "RL stopped (out_of_memory) after round 4 of 20; best round 2."
    )
