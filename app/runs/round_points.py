"""A run's charts, tiles and trends kept a round at a time: what each round adds is worked out once, when it arrives.

A 1,000-round run's charts hold 13 lines of 1,000 points; rounding them and writing them out as JSON again for every
new state of the run cost its first viewer ~10 ms a round. A round's row never changes once scored, so its points are
kept as JSON text, and a chart is its points joined: the first viewer after a round works out that round's points.
The Reward chart (RewardPoints) and the RL metrics (MetricPoints) are worked out apart, each from the figures it
draws alone (REWARD_FIGURES, METRIC_FIGURES): a part draws one of them. What is drawn is what app/runs/metrics.py
draws from all the rounds (tests/run_page/test_round_points.py).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.runs.metrics import (
    REWARD_LINES,
    SMALL_CHARTS,
    Tile,
    Trend,
    json_texts,
    reward_chart_document,
    tiles_of,
    trends_of,
)

TILED = ("reward", "accuracy", "loss")  # the figures the tiles and trends read, in tiles_of's order
_POINTS = "\u0000points:"  # a placeholder for a line's points in a chart's JSON; no name or label holds it


@dataclass(frozen=True)
class RewardPoints:
    """The Reward chart's points of the rounds 0 to `rounds - 1`, oldest first, as JSON text, each line by its key
    ("x": the rounds); `round_zero` the starting adapter's validation, where round 0 is among them."""

    rounds: int = 0
    every: dict[str, list[str]] = field(default_factory=dict)
    round_zero: float | None = None
    trained_rounds: int = 0  # the rounds after round 0

    def taking(self, figures: Mapping[str, Sequence[Any]]) -> RewardPoints:
        """These points and those of the next rounds, oldest first, given by their `figures` (REWARD_FIGURES, each
        a list of its values), leaving these as they are: viewers of the run's earlier state may still be drawing
        from them. Taken a line at a time: a run's first viewer takes all its rounds at once."""
        numbers = figures["round_number"]
        texts = {"x": json_texts(list(numbers))} | {line.name: line.texts(figures[line.field]) for line in REWARD_LINES}
        zero = figures["validation_reward"][0] if numbers and numbers[0] == 0 else self.round_zero
        trained = len(numbers) - bisect_left(numbers, 1)  # numbered from 1, after round 0
        return RewardPoints(self.rounds + len(numbers), _joined(self.every, texts), zero, self.trained_rounds + trained)

    def reward_chart(self) -> str:
        document = reward_chart_document(_POINTS + "x", [_POINTS + line.name for line in REWARD_LINES])
        return _with_points(document, self.every)


@dataclass(frozen=True)
class MetricPoints:
    """The small charts' points of the trained rounds 1 to `trained_rounds`, oldest first, as JSON text, each line by
    its key ("x": the rounds); `drawn` the lines with a point; `known` the values the trained rounds have of the
    figures the tiles and trends read."""

    trained: dict[str, list[str]] = field(default_factory=dict)
    drawn: frozenset[str] = frozenset()
    known: dict[str, list[float]] = field(default_factory=dict)

    def taking(self, figures: Mapping[str, Sequence[Any]]) -> MetricPoints:
        """These points and those of the trained ones of the next rounds, oldest first, given by their `figures`
        (METRIC_FIGURES, each a list of its values), leaving these as they are."""
        start = bisect_left(figures["round_number"], 1)  # the trained rounds, numbered from 1
        trained = {name: values[start:] for name, values in figures.items()} if start else figures
        texts = {"x": json_texts(list(trained["round_number"]))}
        texts |= {line.name: line.texts(trained[line.field]) for chart in SMALL_CHARTS for line in chart.lines}
        drawn = self.drawn | {name for name, line in texts.items() if name != "x" and line.count("null") < len(line)}
        known = {name: [*self.known.get(name, ()), *(v for v in trained[name] if v is not None)] for name in TILED}
        return MetricPoints(_joined(self.trained, texts), frozenset(drawn), known)

    @property
    def trained_rounds(self) -> int:
        return len(self.trained.get("x", ()))

    def small_charts(self) -> list[str]:
        charts = []
        for chart in SMALL_CHARTS:
            if chart.line.name not in self.drawn:
                continue
            beside = _POINTS + chart.beside.name if chart.beside and chart.beside.name in self.drawn else None
            charts.append(_with_points(chart.document(_POINTS + "x", _POINTS + chart.line.name, beside), self.trained))
        return charts

    def tiles(self) -> list[Tile]:
        return tiles_of(self.trained_rounds, *(self.known.get(name, []) for name in TILED))

    def trends(self) -> list[Trend]:
        return trends_of(self.known.get("accuracy", []), self.known.get("reward", []))


# The rounds' figures the charts, tiles and trends draw: all a part that shows them reads of a round
REWARD_FIGURES = tuple(dict.fromkeys(["round_number", *(line.field for line in REWARD_LINES), "validation_reward"]))
METRIC_FIGURES = ("round_number", *dict.fromkeys([*(line.field for chart in SMALL_CHARTS for line in chart.lines),
                                                  *TILED]))


def _joined(texts: dict[str, list[str]], more: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each line's texts and its next ones, in a new list."""
    return {name: [*texts.get(name, ()), *added] for name, added in more.items()}


def _with_points(document: dict[str, Any], points: dict[str, list[str]]) -> str:
    """`document` as JSON, each placeholder in it replaced by the array of its line's points."""
    text = json.dumps(document)
    for key, texts in points.items():
        text = text.replace(json.dumps(_POINTS + key), "[" + ", ".join(texts) + "]")
    return text
