"""The trainer asks for a grader by reward: built-ins score a batch in order; custom ones need the sandbox."""

from __future__ import annotations

import uuid

import pytest

from domain.rewards.config import RewardConfig
from domain.rewards.registry import CustomMetricNeedsSandbox, build_grader
from domain.rewards.types import AnswerScore


def test_a_grader_scores_each_answer_against_its_own_reference_in_order():
    grader = build_grader(RewardConfig.from_dict({"preset": "qa", "metric": "exact_match"}))
    assert grader.label == "Exact match · Q&A"
    assert grader.score_batch(["a", "b", "c"], ["a", "x", "c"]) == [
        AnswerScore(1.0),
        AnswerScore(0.0),
        AnswerScore(1.0),
    ]
    assert grader.score_batch([], []) == []
    with pytest.raises(ValueError, match="2 answers but 1 references"):
        grader.score_batch(["a", "b"], ["a"])


def test_a_custom_reward_has_no_built_in_grader():
    reward = RewardConfig.from_dict({"preset": "verifiable", "metric": f"custom.{uuid.uuid4()}"})
    assert reward.format_bonus is False  # the sandbox's score is the reward, with nothing added
    with pytest.raises(CustomMetricNeedsSandbox, match="runs in the trainer's sandbox"):
        build_grader(reward)


def test_every_built_in_score_stays_within_0_and_1():
    rewards = [
        {"preset": "qa", "metric": "token_f1"},
        {"preset": "numeric", "metric": "numeric_accuracy", "absolute_tolerance": 1e9},
        {"preset": "verifiable", "metric": "math_pairs"},
        {"preset": "verifiable", "metric": "gsm8k"},
        {"preset": "verifiable", "metric": "boxed"},
        {"preset": "structured_json", "metric": "field_match"},
        {"preset": "classification", "metric": "accuracy", "labels": ["1", "2"]},
    ]
    answers = [
        "",
        "1",
        "<think>1</think><answer>\\boxed{1}</answer>",
        '{"a": 1}',
        "1 1 1",
        "\\boxed{{{",
        "é" * 500,
    ]
    for reward in rewards:
        grader = build_grader(RewardConfig.from_dict(reward))
        for reference in ["1", '{"a": 1}', "#### 1", "\\boxed{1}"]:
            for scored in grader.score_batch(answers, [reference] * len(answers)):
                assert 0.0 <= scored.value <= 1.0 and scored.failure is None
