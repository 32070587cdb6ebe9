"""The run page's charts, tiles and trends kept a round at a time draw exactly what app/runs/metrics.py draws from
all the rounds at once, however the rounds arrive (one by one, several at a state, all at first)."""

from __future__ import annotations

import json
import random
from typing import Any

from app.runs.metrics import REWARD_LINES, SMALL_CHARTS, reward_chart, small_charts, tiles, trends
from app.runs.round_points import METRIC_FIGURES, REWARD_FIGURES, MetricPoints, RewardPoints
from projections.rows import RoundRow

MAYBE = ("reward", "signal", "cut_off", "loss", "mean_answer_tokens", "token_entropy", "accuracy", "clipped",
         "grad_norm")

EVERY_FIGURE = tuple(dict.fromkeys(REWARD_FIGURES + METRIC_FIGURES))


def rounds(count: int, seed: int) -> list[RoundRow]:
    """Rounds 0 to count - 1, oldest first, each figure a value or missing at random (round 0 validated only)."""
    rng = random.Random(seed)
    made = []
    for number in range(count):
        figures = {name: None if number == 0 or rng.random() < 0.2 else rng.uniform(0, 3) for name in MAYBE}
        figures["clipped"] = None if seed % 2 else figures["clipped"]  # with one epoch a run has no Clipped line
        made.append(RoundRow(
            run_id=None, round_number=number, rounds_total=count, metric_failures=0, updated=number > 0,  # type: ignore[arg-type]
            validation_reward=rng.random(), best_round=0, sampling_seconds=rng.uniform(1, 9), grading_seconds=0.5,
            update_seconds=rng.uniform(1, 9), validation_seconds=1.0, peak_memory_bytes=None,
            scored_at="", **figures))
    return made


def figures_of(rounds: list[RoundRow], figures: tuple[str, ...]) -> dict[str, list[Any]]:
    """The rounds' `figures`, each a list of its values, as the read model gives them (round_figures)."""
    return {name: [getattr(r, name) for r in rounds] for name in figures}


def taken_in_steps(oldest_first: list[RoundRow], rng: random.Random, points: Any) -> list[Any]:
    """The points (RewardPoints or MetricPoints) after each state of the run: a few rounds arriving at a time."""
    states, at = [], 0
    figures = REWARD_FIGURES if isinstance(points, RewardPoints) else METRIC_FIGURES
    while at < len(oldest_first):
        step = rng.choice((1, 1, 2, 5))
        points = points.taking(figures_of(oldest_first[at:at + step], figures))
        states.append(points)
        at += step
    return states


def test_points_kept_a_round_at_a_time_draw_what_all_the_rounds_draw() -> None:
    rng = random.Random(7)
    for seed in range(6):
        every = rounds(rng.randint(1, 40), seed)
        whole = RewardPoints().taking(figures_of(every, REWARD_FIGURES))
        for points in [*taken_in_steps(every, rng, RewardPoints()), whole]:
            newest_first = every[:points.rounds][::-1]  # as the read model gives them
            assert json.loads(points.reward_chart()) == reward_chart(newest_first)
            assert points.round_zero == every[0].validation_reward
            assert points.trained_rounds == len([r for r in newest_first if r.round_number >= 1])
        whole_metrics = MetricPoints().taking(figures_of(every, METRIC_FIGURES))
        for points in [*taken_in_steps(every, rng, MetricPoints()), whole_metrics]:
            newest_first = every[:points.trained_rounds + 1][::-1]
            assert [json.loads(chart) for chart in points.small_charts()] == small_charts(newest_first)
            assert points.tiles() == tiles(newest_first) and points.trends() == trends(newest_first)


def test_taking_rounds_leaves_the_earlier_points_as_they_were() -> None:
    """Viewers of the run's earlier state may still be drawing from its points when a round arrives."""
    every = rounds(6, seed=0)
    first, then = figures_of(every[:3], EVERY_FIGURE), figures_of(every[3:], EVERY_FIGURE)
    earlier, earlier_metrics = RewardPoints().taking(first), MetricPoints().taking(first)
    chart, small = earlier.reward_chart(), earlier_metrics.small_charts()
    later, later_metrics = earlier.taking(then), earlier_metrics.taking(then)
    assert earlier.reward_chart() == chart and earlier_metrics.small_charts() == small and earlier.rounds == 3
    assert json.loads(later.reward_chart())["x"] == [0, 1, 2, 3, 4, 5] and later_metrics.trained_rounds == 5


def test_a_run_without_trained_rounds_draws_round_zero_alone() -> None:
    round_zero = figures_of(rounds(1, seed=0), EVERY_FIGURE)
    points, metrics = RewardPoints().taking(round_zero), MetricPoints().taking(round_zero)
    assert json.loads(points.reward_chart())["x"] == [0] and points.trained_rounds == 0
    assert metrics.small_charts() == [] and metrics.trends() == [] and metrics.trained_rounds == 0
    assert metrics.tiles()[0].value == "0"


def test_a_line_s_points_are_written_as_json_writes_them() -> None:
    """Each point's text is json.dumps' own of the point (rounded, in % where the line is), not only the same number
    once read: the charts' JSON reads as before, byte for byte, whatever the figure."""
    rng = random.Random(5)
    figures = [None, 0.0, -0.0, 0.2, 0.25, 1.0, 0.00005, -0.00001, 0.123456789, 99.999999, 1e14, 3e16, -2e17,
               float("nan"), float("inf"), float("-inf")]
    figures += [rng.uniform(-5, 5) * 10 ** rng.randint(-7, 6) for _ in range(3000)]
    made = rounds(len(figures), seed=1)
    for row, figure in zip(made, figures, strict=True):
        row.__dict__.update({name: figure for name in MAYBE} | {"validation_reward": figure})
    lines = [*REWARD_LINES, *(line for chart in SMALL_CHARTS for line in chart.lines)]
    assert {(line.percent, line.rounded) for line in lines} == {(True, False), (True, True), (False, True)}
    for line in lines:
        assert line.texts([getattr(row, line.field) for row in made]) == json.dumps(line.points(made))[1:-1].split(", ")
