"""Evaluations in the domain: a baseline is what a full run's reward comes from; Score against baseline."""

from __future__ import annotations

import pytest
from evaluation_helpers import HELD_OUT, OWNER, new_world

from domain.errors import IllegalTransition, SettingsInvalid
from domain.evaluations.scoring import TAKEN_FROM_BASELINE


def test_a_full_run_without_a_reward_or_baseline_is_refused_as_today(world):
    with pytest.raises(SettingsInvalid) as refused:
        world.full_run()
    assert "has no baseline yet" in refused.value.errors["reward"]


def test_a_full_run_takes_its_reward_from_a_completed_baseline(world):
    baseline = world.completed(world.evaluation())
    run = world.verity.get_run(world.org_id, world.finished_run(baseline=str(baseline)))
    reward = run.settings.reward
    assert (reward["preset"], reward["metric"], reward["format_bonus"]) == ("verifiable", "math_pairs", True)
    assert run.settings.baseline == str(baseline)
    assert TAKEN_FROM_BASELINE.startswith("Taken from the baseline's scoring and main metric.")


def test_a_baseline_that_is_not_completed_gives_no_reward(world):
    baseline = world.evaluation()
    with pytest.raises(SettingsInvalid) as refused:
        world.full_run(baseline=str(baseline))
    assert "queued" in refused.value.errors["baseline"]


def test_an_llm_judge_baseline_has_no_default_reward_with_the_documents_words(world):
    baseline = world.completed(world.evaluation("llm_judge", {"preset": "qa"}))
    with pytest.raises(SettingsInvalid) as refused:
        world.full_run(baseline=str(baseline))
    assert refused.value.errors["reward"] == (
        "The baseline's main metric, LLM judge, can't be an RL reward. Choose a reward metric."
    )


def test_an_evaluation_refuses_a_bad_scoring_and_an_unknown_benchmark(world):
    with pytest.raises(SettingsInvalid) as refused:
        world.verity.create_evaluation(
            world.org_id, world.project_id, name="x", source={"kind": "benchmark", "name": "nope"},
            scoring={"preset": "qa"}, main_metric="bleu", actor=OWNER,
        )
    assert set(refused.value.errors) == {"source", "main_metric"}


def test_score_against_baseline_scores_the_adapter_on_the_same_examples_and_metric(world):
    baseline = world.completed(world.evaluation())
    run_id = world.finished_run(baseline=str(baseline))
    against = world.verity.get_evaluation(world.org_id, world.verity.score_against_baseline(world.org_id, run_id,
                                                                                            OWNER).id)
    assert against.baseline_id == baseline and against.adapter_run == run_id
    assert against.source == HELD_OUT and against.main_metric == "math_pairs"
    assert against.adapter["sha256"] == "ab" * 32


def test_an_evaluation_of_another_organization_is_not_found(world):
    other = new_world()
    evaluation = world.evaluation()
    with pytest.raises(Exception) as missing:
        other.verity.get_evaluation(other.org_id, evaluation)
    assert type(missing.value).__name__ == "NotFound"


def test_an_evaluation_completes_once_and_then_can_no_longer_fail(world):
    evaluation = world.completed(world.evaluation())
    with pytest.raises(IllegalTransition):
        world.verity.record_evaluation_failed(evaluation, "late")


def test_an_evaluation_keeps_the_batches_its_custom_metric_failed_and_refuses_counts_that_do_not_add_up(world):
    v = world.verity
    evaluation_id = world.evaluation()
    v.record_evaluation_started(evaluation_id)
    with pytest.raises(IllegalTransition, match="do not add up"):
        v.record_evaluation_completed(evaluation_id, 0.5, {"score": 0.5}, [],
                                      metric_failures={"failed": 9, "graded": 8, "batches": []})

    batch_2 = {"batch": 2, "kind": "execution", "error": "KeyError at line 4"}
    failures = {"failed": 8, "graded": 16, "batches": [batch_2]}
    v.record_evaluation_completed(evaluation_id, 0.25, {"score": 0.25}, [], metric_failures=failures)

    evaluation = v.get_evaluation(world.org_id, evaluation_id)
    assert evaluation.status == "Completed" and evaluation.metric_failures == failures
    assert v.get_evaluation(world.org_id, world.completed(world.evaluation())).metric_failures is None


def test_a_loop_trains_from_the_best_round_benchmarks_and_plateaus(world):
    from domain.runs.settings import run_body_from_api

    v = world.verity
    draft = run_body_from_api({"name": "loop", "training": {"rl": {"rounds": 1}, "advanced": {"seed": 7}}})
    loop_id = v.create_loop(world.org_id, world.project_id, name="math-pairs to 90%", benchmark="math_pairs_held_out",
                            score_column="accuracy", target_percent=90, max_rounds=5, give_up_after=1,
                            reclaim_storage=True, draft=draft, actor=OWNER, role="owner").id
    scores = [0.5, 0.502]
    for number, value in enumerate(scores, start=1):
        step = v.advance_loop(loop_id)
        assert step.action == "train"
        run = v.get_run(None, step.target_id)
        expected_start = None if number == 1 else str(v.get_loop(None, loop_id).rounds[0]["run_id"])
        assert run.settings.start_run == expected_start
        assert run.settings.seed == 7 + number - 1  # new prompts each round
        _finish(world, step.target_id)
        step = v.advance_loop(loop_id)
        assert step.action == "evaluate" and v.get_loop(None, loop_id).status == "Benchmarking"
        v.record_evaluation_started(step.target_id)
        v.record_evaluation_completed(step.target_id, value * 0.9, {"score": value * 0.9, "accuracy": value}, [])
    assert v.advance_loop(loop_id).action == "done"
    loop = v.get_loop(None, loop_id)
    assert loop.status == "Plateaued" and loop.best_round == 2 and loop.scores == scores  # higher, but no real gain


def _finish(world, run_id):
    from domain.runs.progress import RoundResult

    v = world.verity
    v.record_preparing(run_id)
    v.record_round_scored(run_id, RoundResult(0, 0.3, validation_seconds=1.0))
    v.record_round_scored(run_id, RoundResult(1, 0.4, reward=0.4, signal=0.5, cut_off=0.0, updated=True, loss=0.01,
                                              graded_answers=8))
    v.record_saving_adapter(run_id)
    v.record_adapter_ready(run_id, 1, f"runs/{run_id}/adapter", "ab" * 32, 1234)


def test_stop_works_at_any_time_and_cancels_the_running_round(world):
    from domain.runs.settings import run_body_from_api

    v = world.verity
    draft = run_body_from_api({"name": "loop", "training": {"rl": {"rounds": 1}}})
    loop_id = v.create_loop(world.org_id, world.project_id, name="l", benchmark="math_pairs_held_out",
                            score_column="accuracy", target_percent=50, max_rounds=3, give_up_after=2,
                            reclaim_storage=True, draft=draft, actor=OWNER, role="member").id
    run_id = v.advance_loop(loop_id).target_id
    v.stop_loop(world.org_id, loop_id, OWNER)
    assert v.get_loop(None, loop_id).status == "Stopped"
    assert v.get_run(None, run_id).status == "Cancelled"
    assert v.advance_loop(loop_id).action == "done"
