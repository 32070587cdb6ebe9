"""The time-limit rule of an RL run, shared by the trainer and the jobs that watch it (PRODUCT.md).

Before each round the run checks that now + 1.25 x (slowest round so far) + 2 minutes still ends by the time
limit, and stops when it would not; a round still running 3 minutes before the limit is stopped. Round 1
always starts, since nothing is known yet about how long a round takes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

SAVE_ADAPTER_ALLOWANCE = timedelta(minutes=2)
STOP_BEFORE_LIMIT = timedelta(minutes=3)
SLOWEST_ROUND_MARGIN = 1.25


def deadline(launched_at: datetime, time_limit_hours: float) -> datetime:
    """The limit counts from launch, so GPU start-up and the model download use it."""
    return launched_at + timedelta(hours=time_limit_hours)


def stop_time(deadline_at: datetime) -> datetime:
    """When a round still running is stopped, leaving time to save the adapter."""
    return deadline_at - STOP_BEFORE_LIMIT


def may_start_next_round(
    now: datetime, deadline: datetime, slowest_round_seconds: float | None, round_number: int
) -> bool:
    """Whether round `round_number` (1-based) may start at `now`.

    >>> from datetime import datetime, timedelta
    >>> t = datetime(2025, 1, 1)
    >>> may_start_next_round(t, t + timedelta(minutes=10), 240, 2)  # 10 min left, 5 + 2 min needed
    True
    >>> may_start_next_round(t, t + timedelta(minutes=6), 240, 2)  # 6 min left, 7 min needed
    False
    """
    if round_number <= 1 or slowest_round_seconds is None:
        return True
    needed = timedelta(seconds=SLOWEST_ROUND_MARGIN * slowest_round_seconds) + SAVE_ADAPTER_ALLOWANCE
    return now + needed <= deadline
