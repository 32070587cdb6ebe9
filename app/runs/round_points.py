"""A run's charts, tiles and trends kept a round at a time: what each round adds is worked out once, when it arrives.

A 1,000-round run's charts hold 13 lines of 1,000 points; rounding them and writing them out as JSON again for every
new state of the run cost its first viewer ~10 ms a round. A round's row never changes once scored, so its points are
kept as JSON text, and a chart is its points joined: the first viewer after a round works out that round's points.
What is drawn is what app/runs/metrics.py draws from all the rounds (tests/run_page/test_round_points.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.runs.metrics import (
    REWARD_LINES,
    SMALL_CHARTS,
    Tile,
    Trend,
    json_texts,
    known_values,
    reward_chart_document,
    tiles_of,
    trends_of,
)
from projections.rows import RoundRow

TILED = ("reward", "accuracy", "loss")  # the figures the tiles and trends read, in tiles_of's order
_POINTS = "\u0000points:"  # a placeholder for a line's points in a chart's JSON; no name or label holds it


@dataclass(frozen=True)
class RoundPoints:
    """The points of the rounds 0 to `rounds - 1`, oldest first, as JSON text: `every` of every round (the Reward
    chart), `trained` of the rounds after round 0 (the small charts), each line by its key; `known` the values of
    the trained rounds that have one (the tiles and trends)."""

    rounds: int = 0
    every: dict[str, list[str]] = field(default_factory=dict)
    trained: dict[str, list[str]] = field(default_factory=dict)
    drawn: frozenset[str] = frozenset()  # the lines of the small charts with a point
    known: dict[str, list[float]] = field(default_factory=dict)

    def taking(self, rounds: Sequence[RoundRow]) -> RoundPoints:
        """These points and those of `rounds` (the next rounds, oldest first), leaving these as they are: viewers
        of the run's earlier state may still be drawing from them. Taken a line at a time: a run's first viewer
        takes all its rounds at once."""
        trained = [r for r in rounds if r.round_number >= 1]
        every_texts = {"x": json_texts([r.round_number for r in rounds])}
        every_texts |= {line.name: line.texts(rounds) for line in REWARD_LINES}
        trained_texts = {"x": json_texts([r.round_number for r in trained])}
        trained_texts |= {line.name: line.texts(trained) for chart in SMALL_CHARTS for line in chart.lines}
        drawn = self.drawn | {name for name, texts in trained_texts.items()
                              if name != "x" and texts.count("null") < len(texts)}
        known = {name: [*self.known.get(name, ()), *known_values(trained, name)] for name in TILED}
        return RoundPoints(self.rounds + len(rounds), _joined(self.every, every_texts),
                           _joined(self.trained, trained_texts), frozenset(drawn), known)

    @property
    def trained_rounds(self) -> int:
        return len(self.trained.get("x", ()))

    def reward_chart(self) -> str:
        document = reward_chart_document(_POINTS + "x", [_POINTS + line.name for line in REWARD_LINES])
        return _with_points(document, self.every)

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


def _joined(texts: dict[str, list[str]], more: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each line's texts and its next ones, in a new list."""
    return {name: [*texts.get(name, ()), *added] for name, added in more.items()}


def _with_points(document: dict[str, Any], points: dict[str, list[str]]) -> str:
    """`document` as JSON, each placeholder in it replaced by the array of its line's points."""
    text = json.dumps(document)
    for key, texts in points.items():
        text = text.replace(json.dumps(_POINTS + key), "[" + ", ".join(texts) + "]")
    return text
