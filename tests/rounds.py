"""Scored rounds as the trainer reports them, for the tests and benchmarks that record runs without training one:
round 0 (the starting adapter, validated only) and rounds of updates with the figures of a real model or of the tiny
one. Tests import it as `rounds` (tests/conftest.py puts this folder on sys.path), bench/ as `tests.rounds`."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from domain.runs.progress import RoundResult

# A round of updates of a real model on a GPU: the share of prompts it learned from and of answers cut off, its loss,
# and how long each part of the round took.
REAL_MODEL_ROUND: dict[str, Any] = {
    "signal": 0.62,
    "cut_off": 0.02,
    "updated": True,
    "loss": 0.012,
    "sampling_seconds": 81.2,
    "grading_seconds": 2.1,
    "update_seconds": 64.0,
    "validation_seconds": 9.5,
}
# A round of updates of the tiny model on a CPU, a few seconds long.
TINY_MODEL_ROUND: dict[str, Any] = {
    "cut_off": 0.0,
    "loss": 0.01,
    "sampling_seconds": 2.0,
    "grading_seconds": 0.5,
    "update_seconds": 1.5,
    "validation_seconds": 1.0,
    "graded_answers": 64,
}


def scored_round(
    number: int, validation: float, typical: Mapping[str, Any] = REAL_MODEL_ROUND, **figures: Any
) -> RoundResult:
    """Round `number`, whose validation reward is `validation`: round 0 with the `typical` round's validation time
    alone, a later round with the figures of the `typical` round that `figures` does not give."""
    if number == 0:
        return RoundResult(0, validation, validation_seconds=typical["validation_seconds"])
    return RoundResult(number, validation, **{**typical, **figures})


def prompts_of_round(rng: random.Random, training_prompts: int, per_round: int, answers: int) -> dict:
    """A round's prompts as trainer/prompt_summary.py sums them up, with made-up scores."""
    index = rng.sample(range(training_prompts), per_round)
    passed = [rng.choice([0, 0, 1, answers // 2, answers, answers]) for _ in index]
    return {
        "index": index,
        "mean": [round(p / answers * 0.9 + 0.1 * rng.random(), 4) for p in passed],
        "passed": passed,
        "taught": [0 < p < answers for p in passed],
        "tokens": [rng.randint(answers, 60 * answers) for _ in index],
        "answers": answers,
    }
