"""Experiments in the domain: the reward the Compute step shows, the plan rule, and the steps from measuring the
base model to the comparison (the jobs' part played by hand)."""

from __future__ import annotations

import pytest
from consoles import record_trained
from evaluation_helpers import HELD_OUT, MATH_PAIRS_SCORING, OWNER, new_world

from domain.errors import NotAllowed, SettingsInvalid
from domain.experiments.commands import CHOOSE_A_REWARD, reward_line

TINY_RL = {"rounds": 1, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16}


def _experiment(world, **options):
    values = {"source": HELD_OUT, "scoring": MATH_PAIRS_SCORING, "main_metric": "math_pairs", "rl": TINY_RL,
              **options}
    return world.verity.create_experiment(world.org_id, world.project_id, name="RL on math", actor=OWNER,
                                          role="owner", **values).id


def test_the_reward_is_the_evaluations_main_metric_unless_another_is_chosen(world):
    experiment = world.verity.get_experiment(world.org_id, _experiment(world))
    assert experiment.reward["metric"] == "math_pairs" and experiment.reward_is_main_metric
    line = reward_line(experiment.scoring, experiment.main_metric, experiment.reward, True)
    assert line.startswith("Reward: the evaluation's main metric (") and "Math Pairs" in line
    chosen = {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}
    other = world.verity.get_experiment(world.org_id, _experiment(world, reward=chosen))
    assert not other.reward_is_main_metric and other.reward["format_bonus"] is False


def test_an_llm_judge_main_metric_asks_for_a_reward(world):
    with pytest.raises(SettingsInvalid) as refused:
        _experiment(world, scoring={"preset": "qa"}, main_metric="llm_judge")
    assert refused.value.errors == {"reward": CHOOSE_A_REWARD}


def test_training_with_rl_needs_the_pro_plan_and_a_reused_adapter_needs_none():
    free = new_world(plan="pro")
    reward = {**MATH_PAIRS_SCORING, "metric": "math_pairs"}
    # an adapter trained while the organization was on Pro
    run_id = free.finished_run(training={"rl": {"rounds": 1, "reward": reward}})
    free.verity.set_plan(free.org_id, "free", OWNER)
    with pytest.raises(NotAllowed) as refused:
        _experiment(free)
    assert str(refused.value.message).startswith("RL training is on the Pro plan.")
    reusing = free.verity.get_experiment(free.org_id, _experiment(free, reused_run=run_id))
    assert not reusing.trains and reusing.reward is None


def test_the_steps_measure_train_evaluate_and_compare(world):
    v = world.verity
    experiment_id = _experiment(world)
    measure = v.advance_experiment(experiment_id)
    assert measure.action == "evaluate"
    world.completed(measure.target_id, score=0.30)
    train = v.advance_experiment(experiment_id)
    assert train.action == "train" and v.get_experiment(None, experiment_id).status == "Training"
    assert v.advance_experiment(experiment_id).action == "wait"  # the run is still going
    run_id = train.target_id
    record_trained(v, run_id)
    evaluate = v.advance_experiment(experiment_id)
    assert evaluate.action == "evaluate"
    adapter_evaluation = v.get_evaluation(None, evaluate.target_id)
    assert adapter_evaluation.adapter_run == run_id and adapter_evaluation.baseline_id == measure.target_id
    world.completed(evaluate.target_id, score=0.55)
    assert v.advance_experiment(experiment_id).action == "done"
    experiment = v.get_experiment(None, experiment_id)
    assert experiment.status == "Completed" and experiment.difference == pytest.approx(0.25)
    assert experiment.training_ended is not None
