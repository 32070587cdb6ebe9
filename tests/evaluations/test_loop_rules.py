"""The stop rules of a training loop, as pure functions: target reached, rounds spent, plateaued, BEST."""

from __future__ import annotations

from domain.loops.rules import (
    PLATEAUED,
    REAL_GAIN,
    ROUNDS_SPENT,
    TARGET_REACHED,
    best_round,
    decide,
    rounds_without_real_gain,
)


def test_the_best_round_is_the_highest_score_and_ties_go_to_the_earlier_round():
    assert best_round([0.34, 0.50, 0.70, 0.70]) == 3
    assert best_round([0.5, 0.5]) == 1
    assert best_round([None, 0.2]) == 2
    assert best_round([]) is None


def test_real_gain_means_more_than_half_a_point_over_every_earlier_round():
    assert REAL_GAIN == 0.005
    assert rounds_without_real_gain([0.30]) == 0  # the first round counts as a gain
    assert rounds_without_real_gain([0.30, 0.305]) == 1  # exactly half a point is no real gain
    assert rounds_without_real_gain([0.30, 0.306]) == 0
    assert rounds_without_real_gain([0.30, 0.40, 0.35, 0.39]) == 2  # below the best is no gain either


def test_a_loop_stops_once_the_target_is_reached():
    assert decide([0.30, 0.36], target=0.35, max_rounds=8, give_up_after=2) == TARGET_REACHED
    assert decide([0.30], target=0.35, max_rounds=8, give_up_after=2) is None


def test_a_loop_stops_when_its_rounds_are_spent_even_without_a_plateau():
    assert decide([0.1, 0.2, 0.3], target=0.9, max_rounds=3, give_up_after=2) == ROUNDS_SPENT


def test_a_loop_plateaus_after_give_up_after_rounds_in_a_row_without_real_gain():
    assert decide([0.30, 0.301], target=0.9, max_rounds=8, give_up_after=1) == PLATEAUED
    assert decide([0.30, 0.301], target=0.9, max_rounds=8, give_up_after=2) is None
    assert decide([0.30, 0.301, 0.29], target=0.9, max_rounds=8, give_up_after=2) == PLATEAUED


def test_the_target_wins_over_the_other_endings():
    assert decide([0.5, 0.5], target=0.5, max_rounds=2, give_up_after=1) == TARGET_REACHED
