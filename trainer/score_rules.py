"""What every scorer of answers agrees on, free of torch so that the jobs may import its users' specs: an answer's
reward from its metric's score, and the percentile the grading seconds are read at."""

from __future__ import annotations

from domain.rewards.types import AnswerScore


def reward_of(score: AnswerScore) -> float:
    """A graded answer's reward: 0 when its metric failed (a failure is never a genuine score), else the metric's
    value held to [0, 1]. A cut-off answer is not graded at all and scores 0 before it gets here.

    >>> reward_of(AnswerScore(1.7)), reward_of(AnswerScore(-0.2)), reward_of(AnswerScore(0.9, failure="timeout"))
    (1.0, 0.0, 0.0)
    """
    return 0.0 if score.failure else min(max(float(score.value), 0.0), 1.0)


def nearest_rank(ordered: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted values.

    >>> nearest_rank([1.0, 2.0, 3.0, 4.0], 0.95), nearest_rank([1.0, 2.0, 3.0, 4.0], 0.5), nearest_rank([], 0.95)
    (4.0, 2.0, 0.0)
    """
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, -(-int(share * 100) * len(ordered) // 100) - 1))]
