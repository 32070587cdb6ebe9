"""The time-limit rule: round 1 always starts; a later round starts if 1.25 x the slowest + 2 minutes fit."""

from __future__ import annotations

from datetime import datetime, timedelta

from domain.runs.time_limit import deadline, may_start_next_round, stop_time

LAUNCH = datetime(2025, 3, 1, 12, 0)


def test_round_one_always_starts_even_past_the_limit():
    assert may_start_next_round(LAUNCH + timedelta(hours=3), deadline(LAUNCH, 2), None, 1)


def test_a_later_round_starts_only_when_the_slowest_round_and_saving_still_fit():
    limit = deadline(LAUNCH, 1)
    slowest = 8 * 60  # 8 minutes: 10 minutes with the quarter, 12 with saving
    assert may_start_next_round(limit - timedelta(minutes=12), limit, slowest, 5)
    assert not may_start_next_round(limit - timedelta(minutes=11, seconds=59), limit, slowest, 5)


def test_a_running_round_is_stopped_three_minutes_before_the_limit():
    assert stop_time(deadline(LAUNCH, 2)) == LAUNCH + timedelta(hours=2) - timedelta(minutes=3)
