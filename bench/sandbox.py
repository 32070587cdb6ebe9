"""How fast the custom-metric sandbox grades: answers per second in batches of 8, and the cost of one batch.

Run: .venv/bin/python bench/sandbox.py  (a few seconds; prints one line per figure)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from trainer.sandbox import SandboxedMetric, SandboxLimits

EXACT_MATCH = "def score(answer, reference):\n    return float(answer.strip() == reference.strip())\n"
ROUND_ANSWERS = 64 * 8  # the product's default round: 64 prompts x 8 answers
ROUNDS = 5


def _round_of_answers() -> tuple[list[str], list[str]]:
    answers = [f"<think>adding</think><answer>{number % 100}</answer>" for number in range(ROUND_ANSWERS)]
    references = [str(number % 97) for number in range(ROUND_ANSWERS)]
    return answers, references


def answers_per_second(parallel_batches: int) -> float:
    answers, references = _round_of_answers()
    with SandboxedMetric(EXACT_MATCH, limits=SandboxLimits(parallel_batches=parallel_batches)) as metric:
        metric.score_batch(answers[:8], references[:8])  # warm up
        started = time.perf_counter()
        for _ in range(ROUNDS):
            metric.score_batch(answers, references)
        return ROUNDS * ROUND_ANSWERS / (time.perf_counter() - started)


def median_milliseconds(action: Callable[[], object], repeats: int) -> float:
    """Median wall time of `action`, called `repeats` times, in milliseconds."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return 1000 * statistics.median(timings)


def batch_milliseconds(repeats: int = 50) -> float:
    """Median wall time of one request of one batch of 8: fork, lock-down, metric, results, clean-up."""
    answers, references = _round_of_answers()
    with SandboxedMetric(EXACT_MATCH) as metric:
        return median_milliseconds(lambda: metric.score_batch(answers[:8], references[:8]), repeats)


def worker_start_milliseconds(repeats: int = 5) -> float:
    return median_milliseconds(lambda: SandboxedMetric(EXACT_MATCH).close(), repeats)


def fresh_python_milliseconds(repeats: int = 5) -> float:
    """What a fresh interpreter per batch would cost instead of a fork: the reason for the worker."""
    fresh_python = [sys.executable, "-E", "-s", "-c", "import json, re"]
    return median_milliseconds(lambda: subprocess.run(fresh_python, check=True), repeats)


def main() -> None:
    print(f"exact match, {ROUNDS} rounds of {ROUND_ANSWERS} answers in batches of 8:")
    for parallel in (1, 2):
        print(f"  {answers_per_second(parallel):8.0f} answers/s with {parallel} batch(es) at once")
    print(f"  {batch_milliseconds():8.2f} ms per request of one batch of 8 (fork, lock down, score, clean up)")
    print(f"  {worker_start_milliseconds():8.1f} ms to start and stop a metric's worker (once per run)")
    print(f"  {fresh_python_milliseconds():8.1f} ms for a fresh Python per batch instead (not used)")


if __name__ == "__main__":
    main()
