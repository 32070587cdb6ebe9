"""The time-limit rule: round 1 always starts; a later round starts if 1.25 x the slowest + 2 minutes fit; a round
still running 3 minutes before the limit is stopped."""

from __future__ import annotations

import doctest

import domain.runs.time_limit
from domain.runs.time_limit import may_start_round, must_stop_running_round

LIMIT = 10_000.0


def test_round_one_always_starts_even_past_the_limit():
    assert may_start_round(1, now=LIMIT + 60, deadline=LIMIT, slowest_round_seconds=0.0)


def test_a_later_round_starts_only_when_its_slowest_time_plus_a_quarter_and_saving_fit():
    slowest = 400.0  # 1.25 × 400 + 120 = 620 seconds needed
    assert may_start_round(5, now=LIMIT - 620, deadline=LIMIT, slowest_round_seconds=slowest)
    assert not may_start_round(5, now=LIMIT - 619, deadline=LIMIT, slowest_round_seconds=slowest)


def test_a_round_still_running_three_minutes_before_the_limit_is_stopped():
    assert not must_stop_running_round(now=LIMIT - 181, deadline=LIMIT)
    assert must_stop_running_round(now=LIMIT - 180, deadline=LIMIT)


def test_the_worked_examples_hold():
    assert doctest.testmod(domain.runs.time_limit).failed == 0
