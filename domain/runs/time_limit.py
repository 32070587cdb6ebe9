"""The time-limit rule of PRODUCT.md, as pure functions of the clock (seconds since the epoch).

Before each round the run checks that now + 1.25 × (slowest round so far) + 2 minutes still ends by the time limit,
and stops when it would not; round 1 always starts, since nothing is known yet about how long a round takes. A
round still running 3 minutes before the limit is stopped and only its work is lost.

The trainer applies it (trainer/loop.py, trainer/tuning.py): this module imports nothing, so the trainer may use it
without loading the event store's library.
"""

from __future__ import annotations

SLOWEST_ROUND_FACTOR = 1.25  # the slowest round so far, plus a quarter
SAVE_SECONDS = 120.0  # two minutes to save the adapter
STOP_BEFORE_LIMIT_SECONDS = 180.0  # training stops about 3 minutes before the limit


def may_start_round(round_number: int, now: float, deadline: float, slowest_round_seconds: float) -> bool:
    """Whether round `round_number` (1-based) may start at `now` (seconds since the epoch).

    With 15 minutes left, a slowest round of 10 minutes fits (1.25 × 600 + 120 = 870 s), one of 11 minutes does
    not (1.25 × 660 + 120 = 945 s):
    >>> may_start_round(2, now=0.0, deadline=900.0, slowest_round_seconds=600.0)
    True
    >>> may_start_round(2, now=0.0, deadline=900.0, slowest_round_seconds=660.0)
    False
    >>> may_start_round(1, now=0.0, deadline=1.0, slowest_round_seconds=0.0)
    True
    """
    if round_number <= 1:
        return True
    return now + SLOWEST_ROUND_FACTOR * slowest_round_seconds + SAVE_SECONDS <= deadline


def training_stop_time(deadline: float) -> float:
    """The moment a round still running is stopped: 3 minutes before the limit."""
    return deadline - STOP_BEFORE_LIMIT_SECONDS


def must_stop_running_round(now: float, deadline: float) -> bool:
    """Whether the round running at `now` must be stopped (its work is lost).

    >>> must_stop_running_round(now=819.0, deadline=1000.0), must_stop_running_round(now=820.0, deadline=1000.0)
    (False, True)
    """
    return now >= training_stop_time(deadline)
