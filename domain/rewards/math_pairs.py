"""Math Pairs: the synthetic verifiable task of the built-in rewards, and the tiny model's warm-start task.

A problem is the sum of two two-digit numbers or the product of two one-digit numbers; the reference is the
final number. Everything is drawn from a seeded `random.Random`, so the same seed gives the same prompts.
"""

from __future__ import annotations

import random


def math_pairs_problem(rng: random.Random) -> tuple[str, str]:
    """One problem as (question, reference).

    >>> math_pairs_problem(random.Random(7))
    ('What is 29+60?', '89')
    """
    if rng.random() < 0.75:
        a, b = rng.randint(10, 99), rng.randint(10, 99)
        return f"What is {a}+{b}?", str(a + b)
    a, b = rng.randint(2, 9), rng.randint(2, 9)
    return f"What is {a}*{b}?", str(a * b)
