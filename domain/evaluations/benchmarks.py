"""Built-in benchmarks an evaluation or a training loop can score on, besides a version's test examples.

"Math Pairs held-out" (001's "RLVR Math Pairs held-out"): Math Pairs problems that no run on the default seed
trains or validates on. They are drawn from their own fixed seed and skip every question of
`math_pairs_rows(HELD_OUT_EXCLUDES_SEED, ...)`'s training and validation rows, so they are the same everywhere.
"""

from __future__ import annotations

import random
from typing import Any

from domain.rewards.config import SYNTHETIC_PROMPTS_DEFAULT
from domain.rewards.math_pairs import math_pairs_problem
from domain.rewards.verifiable import Row, math_pairs_rows, user_row

MATH_PAIRS_HELD_OUT = "math_pairs_held_out"
BENCHMARKS: dict[str, str] = {MATH_PAIRS_HELD_OUT: "RLVR Math Pairs held-out"}
HELD_OUT_EXCLUDES_SEED = 0  # the seed runs take by default: their prompts are never benchmark problems
HELD_OUT_DEFAULT_COUNT = 64
# The scoring and main metric of the benchmark: the Math Pairs reward, with its format bonus.
MATH_PAIRS_SCORING: dict[str, Any] = {"preset": "verifiable", "format_bonus": True}
MATH_PAIRS_MAIN_METRIC = "math_pairs"


def math_pairs_held_out_rows(count: int = HELD_OUT_DEFAULT_COUNT) -> list[Row]:
    """`count` distinct held-out problems, the same on every call.

    >>> [row["prompt"][0]["content"] for row in math_pairs_held_out_rows(2)] == [
    ...     row["prompt"][0]["content"] for row in math_pairs_held_out_rows(3)[:2]]
    True
    """
    training, validation = math_pairs_rows(HELD_OUT_EXCLUDES_SEED, SYNTHETIC_PROMPTS_DEFAULT)
    seen = {row["prompt"][0]["content"] for row in (*training, *validation)}
    rng = random.Random("math-pairs:held-out")
    rows: list[Row] = []
    while len(rows) < count:
        question, answer = math_pairs_problem(rng)
        if question not in seen:
            seen.add(question)
            rows.append(user_row(question, answer))
    return rows
