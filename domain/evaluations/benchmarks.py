"""Built-in benchmarks an evaluation or a training loop can score on, besides a version's test examples.

"Math Pairs held-out" (001's "RLVR Math Pairs held-out"): Math Pairs problems that no run trains or validates on,
whatever its seed or number of synthetic prompts (domain/rewards/verifiable.py draws every run's rows around
them), so a loop whose rounds take new seeds still never trains on its benchmark. They are the same everywhere.
"""

from __future__ import annotations

from typing import Any

from domain.rewards.verifiable import HELD_OUT_PROBLEMS, Row, math_pairs_held_out, user_row

MATH_PAIRS_HELD_OUT = "math_pairs_held_out"
BENCHMARKS: dict[str, str] = {MATH_PAIRS_HELD_OUT: "RLVR Math Pairs held-out"}
HELD_OUT_DEFAULT_COUNT = 64
# The scoring and main metric of the benchmark: the Math Pairs reward, with its format bonus.
MATH_PAIRS_SCORING: dict[str, Any] = {"preset": "verifiable", "format_bonus": True}
MATH_PAIRS_MAIN_METRIC = "math_pairs"


def math_pairs_held_out_rows(count: int = HELD_OUT_DEFAULT_COUNT) -> list[Row]:
    """The first `count` (at most 1,000) held-out problems, the same on every call.

    >>> [row["prompt"][0]["content"] for row in math_pairs_held_out_rows(2)] == [
    ...     row["prompt"][0]["content"] for row in math_pairs_held_out_rows(3)[:2]]
    True
    """
    if not 1 <= count <= HELD_OUT_PROBLEMS:
        raise ValueError(f"Math Pairs held-out has {HELD_OUT_PROBLEMS:,} problems; ask for 1 to that many.")
    return [user_row(question, answer) for question, answer in math_pairs_held_out()[:count]]
