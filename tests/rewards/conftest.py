"""Helpers for the reward tests: build a grader from the API's words and score one answer."""

from __future__ import annotations

import pytest

from domain.rewards.config import RewardConfig
from domain.rewards.registry import build_grader
from domain.rewards.types import AnswerScore


def score(reward: dict, answer: str, reference: str) -> AnswerScore:
    grader = build_grader(RewardConfig.from_dict(reward))
    return grader.score_batch([answer], [reference])[0]


@pytest.fixture
def score_with():
    return score
