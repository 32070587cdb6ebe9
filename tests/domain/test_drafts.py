"""A draft's journey before launch: edited and deleted (an event each, a Draft only), duplicated under its own
name, started from another run's adapter (whose size and scaling it keeps), and what its settings say they do."""

from __future__ import annotations

from uuid import uuid4

import pytest

from domain.errors import IllegalTransition, SettingsInvalid
from domain.runs.launch_words import launch_confirmation, prompts_per_round_words
from domain.runs.reward import MAKES_OWN_PROMPTS, reward_label, training_prompts
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def stored_events(world, run_id) -> list[str]:
    return [type(event).__name__ for event in world.verity.repository.event_store.get(run_id)]


def test_a_draft_is_edited_in_place_and_the_event_names_what_changed(world, owner, draft):
    v = world.verity
    run_id = world.saved(rounds=3)
    v.edit_run(world.org_id, run_id, run_body_from_api({"name": "renamed", "training": {"rl": {
        "rounds": 5, "reward": {"preset": "qa", "metric": "token_f1"}}}}), owner)
    run = v.get_run(world.org_id, run_id)
    assert (run.status, run.settings.name, run.total_rounds) == ("Draft", "renamed", 5)
    edited = list(v.repository.event_store.get(run_id))[-1]
    assert type(edited).__name__ == "Edited" and edited.changes == ["Name", "Rounds", "Reward"]


def test_a_deleted_draft_is_recorded_and_nothing_more_happens_to_it(world, owner, draft):
    v = world.verity
    run_id = world.saved()
    v.delete_run(world.org_id, run_id, owner)
    assert v.get_run(world.org_id, run_id).status == "Deleted"
    assert stored_events(world, run_id) == ["Saved", "Deleted"]  # the store keeps its history
    for refused, words in (
        (lambda: v.edit_run(world.org_id, run_id, draft(), owner), "Only a draft can be edited: this run is Deleted."),
        (lambda: v.launch_run(world.org_id, run_id, owner, "owner"), "Only a draft can be launched"),
        (lambda: v.delete_run(world.org_id, run_id, owner), "Only a draft can be deleted: this run is Deleted"),
    ):
        with pytest.raises(IllegalTransition, match=words):
            refused()


def test_only_a_draft_may_be_edited_or_deleted_and_the_refusal_says_why(world, owner, draft):
    v = world.verity
    queued = world.launched()
    with pytest.raises(IllegalTransition) as refused:
        v.delete_run(world.org_id, queued, owner)
    assert refused.value.message == (
        "Only a draft can be deleted: this run is Queued, and its history stays on the Runs list."
    )
    with pytest.raises(IllegalTransition) as refused:
        v.edit_run(world.org_id, queued, draft(rounds=2), owner)
    assert refused.value.message == "Only a draft can be edited: this run is Queued. Duplicate it to change it."
    assert stored_events(world, queued) == ["Saved", "Launched"]


def test_duplicate_names_the_copy_after_its_source(world, owner):
    v = world.verity
    copy = v.get_run(world.org_id, v.duplicate_run(world.org_id, world.saved(), owner).id)
    assert copy.settings.name == "math (copy)"
    long = v.save_run(world.org_id, world.project_id, run_body_from_api(
        {"name": "x" * 200, "training": {"rl": {"reward": MATH_PAIRS}}}), owner).id
    assert v.get_run(world.org_id, v.duplicate_run(world.org_id, long, owner).id).settings.name == (
        "x" * 193 + " (copy)")  # within the 200 characters a name may have


def test_start_from_keeps_the_sources_adapter_size_and_refuses_another_in_words(world, owner):
    v = world.verity
    source = world.adapter_ready(lora_rank=8, lora_alpha=16)

    def save(**advanced):
        body = {"name": "continued", "training": {"rl": {"start_run": str(source), "reward": MATH_PAIRS},
                                                  "advanced": advanced}}
        return v.get_run(world.org_id, v.save_run(world.org_id, world.project_id, run_body_from_api(body), owner).id)

    assert save().settings.lora_rank == 8  # left out: the source's
    assert save(lora_rank=8, lora_alpha=16).settings.lora_alpha == 16
    with pytest.raises(SettingsInvalid) as refused:
        save(lora_rank=16, lora_alpha=32)  # the product's defaults, typed: still not the source's
    assert refused.value.errors == {
        "lora_rank": "Adapter size (LoRA rank) is 8, the adapter size of “math”, which this run starts from: a run "
        "that continues an adapter keeps its size and scaling. Leave it out, or give 8.",
        "lora_alpha": "Adapter scaling (LoRA alpha) is 16, the adapter scaling of “math”, which this run starts "
        "from: a run that continues an adapter keeps its size and scaling. Leave it out, or give 16.",
    }


def test_math_pairs_ignores_a_dataset_versions_rows_so_their_references_are_not_checked(world, owner):
    v = world.verity
    v.reference_reader = lambda key, split: iter(["Paris", "Lyon"])  # a version of words, not numbers
    dataset_id = v.create_dataset(world.org_id, "capitals", owner).id
    version = v.record_dataset_version(
        world.org_id, dataset_id, version_id=uuid4(), storage_key="datasets/capitals",
        split_counts={"train": 1, "validation": 1, "test": 0}, shape="messages", has_images=False, actor=owner,
    ).id

    def body(reward):
        return run_body_from_api({"name": "n", "dataset_version": str(version), "training": {"rl": {"reward": reward}}})

    with pytest.raises(SettingsInvalid) as refused:  # a reward that scores the version's references checks them
        v.save_run(world.org_id, world.project_id, body({"preset": "numeric", "metric": "numeric_accuracy"}), owner)
    assert refused.value.errors["dataset_version"].startswith("Incompatible reference answers:")
    run_id = v.save_run(world.org_id, world.project_id, body(MATH_PAIRS), owner).id
    saved = v.get_run(world.org_id, run_id).settings
    assert saved.dataset_version == str(version)  # what the person chose is kept, and said not to be used
    assert training_prompts(saved.reward, saved.dataset_version) == MAKES_OWN_PROMPTS
    assert MAKES_OWN_PROMPTS == "Math Pairs makes its own prompts: the Dataset version's rows are not used."
    assert training_prompts({"preset": "verifiable", "metric": "gsm8k"}, str(version)) == (
        "The Dataset version's training examples.")  # GSM8K trains on an uploaded set in its shape


def test_a_trial_with_a_baseline_takes_its_reward_as_the_full_run_would(world, owner):
    v = world.verity
    baseline = v.create_evaluation(
        world.org_id, world.project_id, name="Baseline", source={"kind": "benchmark", "name": "math_pairs_held_out",
                                                                 "count": 8},
        scoring={"preset": "verifiable", "format_bonus": True}, main_metric="math_pairs", actor=owner).id
    v.record_evaluation_started(baseline)
    v.record_evaluation_completed(baseline, 0.4, {"score": 0.4}, [])
    trial = run_body_from_api({"name": "t", "kind": "trial", "baseline": str(baseline),
                               "training": {"rl": {"reward": None}}})
    run_id = v.save_run(world.org_id, world.project_id, trial, owner).id
    assert v.get_run(world.org_id, run_id).settings.reward == (
        v.baseline_reward(world.org_id, baseline))


def test_sft_saves_its_default_batch_beside_a_larger_micro_batch():
    sft = run_body_from_api({"training": {"objective": "sft", "advanced": {"micro_batch_size": 32}}})
    assert (sft.batch_size, sft.micro_batch_size) == (8, 32)  # one pass takes the whole batch
    with pytest.raises(SettingsInvalid) as refused:
        run_body_from_api({"training": {"objective": "sft", "sft": {"batch_size": 12},
                                        "advanced": {"micro_batch_size": 8}}})
    assert refused.value.errors == {
        "batch_size": "Batch size must be a multiple of Micro batch size: each step adds up whole micro batches."}


def test_the_launch_confirmation_and_the_numbers_speak_the_runs_own_words():
    assert launch_confirmation(RunSettings(rounds=3)) == (
        "A full run: 3 rounds, stopped by its time limit of 2 hours at the latest.")
    assert launch_confirmation(RunSettings(objective="sft", epochs=2)) == (
        "A full SFT run: 2 epochs in steps of 8 examples, stopped by its time limit of 2 hours at the latest.")
    assert launch_confirmation(RunSettings(objective="dpo", kind="trial", trial_minutes=10)) == (
        "A trial: one epoch on up to 8 training examples and 10 minutes, then the GPU is released.")
    assert prompts_per_round_words(RunSettings(kind="trial", prompts_per_round=16)) == "8 (a trial uses at most 8)"
    assert prompts_per_round_words(RunSettings(kind="trial", prompts_per_round=4)) == "4"
    assert prompts_per_round_words(RunSettings(prompts_per_round=16)) == "16"


def test_a_custom_reward_is_worded_by_its_metrics_name_and_version():
    custom = {"preset": "qa", "metric": "custom.7b1e2f9c-0000-4000-8000-000000000000",
              "custom_metric": "7b1e2f9c-0000-4000-8000-000000000000"}
    assert reward_label(custom, "exact_year (v2)") == "exact_year (v2) · Q&A"
    assert reward_label(custom) == "Custom metric · Q&A"  # where the name is not known
    assert reward_label({"preset": "qa", "metric": "token_f1"}, "ignored") == "Token F1 · Q&A"
