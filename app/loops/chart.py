"""The loop page's bar chart of benchmark score per round, laid out here and drawn as SVG by the template.

A y-axis in percent that starts at 0 (so a bar's height is its score), each bar's value above it, round labels
(R1, R2, ...) under the bars, a dashed line at the target with its label, and the BEST round's bar in the accent
colour. The axis ends at the next 10% above the highest score or the target, so 43.8% and 45.3% do not look alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WIDTH, HEIGHT = 760, 300
# Margins: the tick labels, the target label (beside the plot, clear of any bar), BEST and the value above the
# tallest bar, the round labels.
LEFT, RIGHT, TOP, BOTTOM = 56, 100, 40, 40
WIDEST_BAR = 64


@dataclass(frozen=True)
class Bar:
    round_number: int
    score: float | None  # a share in [0, 1]; None while the round is not scored yet
    is_best: bool
    x: float  # the bar's left edge
    width: float
    y: float  # the bar's top
    height: float

    @property
    def centre(self) -> float:
        return self.x + self.width / 2

    @property
    def value(self) -> str:
        return f"{self.score * 100:.1f}%" if self.score is not None else "not scored yet"


@dataclass(frozen=True)
class Tick:
    percent: int
    y: float


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    left: float
    right: float  # the plot's right edge
    top: float
    baseline: float  # the y of 0%
    ticks: list[Tick]
    bars: list[Bar]
    target: float  # a share in [0, 1]
    target_y: float
    axis_title: str

    @property
    def target_label(self) -> str:
        return f"Target {self.target * 100:.1f}%"

    @property
    def description(self) -> str:
        """What the chart shows, for a screen reader: "R1 39.1%, R2 45.3% (best); target 35.0%"."""
        bars = ", ".join(f"R{b.round_number} {b.value}{' (best)' if b.is_best else ''}" for b in self.bars)
        return f"{self.axis_title} per round: {bars or 'no rounds yet'}; {self.target_label.lower()}"


def bar_chart(rounds: Sequence[Mapping[str, Any]], target: float, axis_title: str) -> BarChart:
    """The chart of a loop's rounds (each with round_number, score and is_best, oldest first).

    >>> chart = bar_chart([{"round_number": 1, "score": 0.25, "is_best": True}], 0.35, "Accuracy")
    >>> [t.percent for t in chart.ticks], chart.bars[0].value, chart.target_label
    ([0, 10, 20, 30, 40], '25.0%', 'Target 35.0%')
    """
    highest = max([target, *(r["score"] for r in rounds if r["score"] is not None)])
    top_percent = min(100, math.floor(highest * 10) * 10 + 10)  # the next 10% above the highest
    plot_height = HEIGHT - TOP - BOTTOM
    baseline = float(HEIGHT - BOTTOM)

    def y_of(share: float) -> float:
        return round(baseline - min(share * 100, top_percent) / top_percent * plot_height, 1)

    ticks = [Tick(p, y_of(p / 100)) for p in range(0, top_percent + 1, 10)]
    slot = (WIDTH - LEFT - RIGHT) / max(len(rounds), 1)
    width = round(min(WIDEST_BAR, slot * 0.6), 1)
    bars = []
    for index, r in enumerate(rounds):
        top = y_of(r["score"] or 0.0)
        bars.append(Bar(int(r["round_number"]), r["score"], bool(r["is_best"]),
                        x=round(LEFT + slot * index + (slot - width) / 2, 1), width=width, y=top,
                        height=round(baseline - top, 1)))
    return BarChart(WIDTH, HEIGHT, LEFT, WIDTH - RIGHT, TOP, baseline, ticks, bars, target, y_of(target), axis_title)
