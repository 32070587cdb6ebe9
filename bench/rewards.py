"""How fast the rewards score: answers per second for Token F1, Numeric accuracy, Math Pairs with the format
bonus, and a custom metric through the trainer's sandbox in batches of 8 (where the sandbox is present).

Run: .venv/bin/python bench/rewards.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import time
from collections.abc import Callable, Sequence

from domain.rewards.config import RewardConfig
from domain.rewards.custom import BATCH_SIZE
from domain.rewards.registry import build_grader
from domain.rewards.verifiable import math_pairs_rows

CUSTOM_SOURCE = """
def score(answer, reference):
    return float(answer.strip() == reference.strip())
"""
ScoreBatch = Callable[[Sequence[str], Sequence[str]], object]


def answers_per_second(
    score_batch: ScoreBatch, answers: list[str], references: list[str], seconds: float
) -> float:
    """Scores the batch over and over for about `seconds`; answers scored per second of wall time."""
    scored, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        score_batch(answers, references)
        scored += len(answers)
    return scored / elapsed


def qa_batch(rng: random.Random, size: int) -> tuple[list[str], list[str]]:
    words = ("the", "train", "travels", "at", "eighty", "kilometres", "an", "hour", "to", "the", "city")
    references = [" ".join(rng.sample(words, 4)) for _ in range(size)]
    answers = [" ".join(rng.sample(words, rng.randint(1, len(words)))) for _ in range(size)]
    return answers, references


def numeric_batch(rng: random.Random, size: int) -> tuple[list[str], list[str]]:
    references = [str(rng.randint(0, 10_000)) for _ in range(size)]
    return [rng.choice([r, f"{r}.0", f"about {r}", str(int(r) + 1)]) for r in references], references


def math_pairs_batch(rng: random.Random, size: int) -> tuple[list[str], list[str]]:
    rows, _ = math_pairs_rows(seed=1, count=size, validation_count=0)
    references = [row["reference"] for row in rows]
    shapes = ["<think>adding the pairs</think><answer>{}</answer>", "{}", "The sum is {}."]
    return [rng.choice(shapes).format(r) for r in references], references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="how long to time each reward")
    options = parser.parse_args()
    rng = random.Random(0)
    built_in = [
        ({"preset": "qa", "metric": "token_f1"}, qa_batch),
        ({"preset": "numeric", "metric": "numeric_accuracy", "relative_tolerance": 0.01}, numeric_batch),
        ({"preset": "verifiable", "metric": "math_pairs", "format_bonus": True}, math_pairs_batch),
    ]
    for reward, make_batch in built_in:
        grader = build_grader(RewardConfig.from_dict(reward))
        answers, references = make_batch(rng, 1_024)
        rate = answers_per_second(grader.score_batch, answers, references, options.seconds)
        print(f"{grader.label:<36} {rate:>12,.0f} answers/s")

    if importlib.util.find_spec("trainer.sandbox.metric") is None:
        print("custom metric (sandbox)               skipped: trainer/sandbox/ is not there")
        return
    from trainer.sandbox.metric import SandboxedMetric

    answers, references = numeric_batch(rng, BATCH_SIZE)
    with SandboxedMetric(CUSTOM_SOURCE, name="bench") as metric:
        metric.score_batch(answers, references)  # the worker's start-up is not what is measured
        rate = answers_per_second(metric.score_batch, answers, references, max(options.seconds, 2.0))
    print(f"{'custom metric, sandboxed, batches of ' + str(BATCH_SIZE):<36} {rate:>12,.0f} answers/s")


if __name__ == "__main__":
    main()
