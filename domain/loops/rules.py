"""The stop rules of a training loop (001), as pure functions of the scores of its rounds, in round order.

Scores are shares in [0, 1] (the leaderboard shows them as percents). "Real gain": a round's score beats the best
score of every earlier round by more than REAL_GAIN (half a percentage point); the first scored round always
counts as a gain. The BEST round is the highest score, ties going to the earlier round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

REAL_GAIN = 0.005  # more than 0.5 points on the percent scale
TARGET_REACHED: Final = "target_reached"
ROUNDS_SPENT: Final = "rounds_spent"
PLATEAUED: Final = "plateaued"
Ending = Literal["target_reached", "rounds_spent", "plateaued"]


def best_round(scores: Sequence[float | None]) -> int | None:
    """The 1-based number of the best scored round; ties go to the earlier round.

    >>> best_round([0.3, 0.5, 0.5])
    2
    >>> best_round([None]) is None
    True
    """
    best: int | None = None
    best_score = 0.0
    for number, score in enumerate(scores, start=1):
        if score is not None and (best is None or score > best_score):
            best, best_score = number, score
    return best


def rounds_without_real_gain(scores: Sequence[float]) -> int:
    """How many of the latest rounds in a row did not beat every earlier round by more than REAL_GAIN.

    >>> rounds_without_real_gain([0.30, 0.304, 0.40, 0.401, 0.39])
    2
    """
    count = 0
    for number in range(len(scores)):
        earlier = scores[:number]
        gained = not earlier or scores[number] > max(earlier) + REAL_GAIN
        count = 0 if gained else count + 1
    return count


def target_reached(scores: Sequence[float], target: float) -> bool:
    return bool(scores) and max(scores) >= target


def rounds_spent(scores: Sequence[float], max_rounds: int) -> bool:
    return len(scores) >= max_rounds


def plateaued(scores: Sequence[float], give_up_after: int) -> bool:
    return rounds_without_real_gain(scores) >= give_up_after


def decide(scores: Sequence[float], target: float, max_rounds: int, give_up_after: int) -> Ending | None:
    """Whether the loop stops after its latest round, and why; None starts the next round.

    The target wins over the others; a loop whose last allowed round also shows no gain has spent its rounds.
    """
    if target_reached(scores, target):
        return TARGET_REACHED
    if rounds_spent(scores, max_rounds):
        return ROUNDS_SPENT
    if plateaued(scores, give_up_after):
        return PLATEAUED
    return None
