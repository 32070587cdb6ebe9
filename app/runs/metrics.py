"""001's RL Metrics from the rounds read model: Accuracy and Reward trends, the stat tiles, and chart data.

Pure functions of the rounds (newest first, as the read model gives them); nothing here reads a store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from projections.rows import RoundRow

FLAT_WITHIN = 0.005  # a change of less than half a point between the windows reads as flat


@dataclass(frozen=True)
class Trend:
    """An early window of rounds against a late one: 001's "+0.037 rising", with the peak reached."""

    name: str
    early: float
    late: float
    peak: float
    window: int  # rounds in each window

    @property
    def delta(self) -> float:
        return self.late - self.early

    @property
    def direction(self) -> str:
        if abs(self.delta) < FLAT_WITHIN:
            return "flat"
        return "rising" if self.delta > 0 else "falling"

    @property
    def explanation(self) -> str:
        return (
            f"Mean of the last {self.window} round{'s' if self.window > 1 else ''} ({self.late:.3f}) against the "
            f"first {self.window} ({self.early:.3f})."
        )


def trend(name: str, values: Sequence[float | None]) -> Trend | None:
    """The trend of a series in round order; None with fewer than two values.

    >>> t = trend("Reward", [0.2, 0.3, 0.4, 0.5])
    >>> (t.window, round(t.delta, 3), t.direction, t.peak)
    (1, 0.3, 'rising', 0.5)
    """
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return None
    window = max(1, len(known) // 4)
    early = sum(known[:window]) / window
    late = sum(known[-window:]) / window
    return Trend(name=name, early=early, late=late, peak=max(known), window=window)


@dataclass(frozen=True)
class Tile:
    label: str
    value: str
    hint: str


def _trained(rounds: Sequence[RoundRow]) -> list[RoundRow]:
    """The rounds after round 0, oldest first."""
    return sorted((r for r in rounds if r.round_number >= 1), key=lambda r: r.round_number)


def _number(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


# A reader sees 0.0000 round after round and thinks training is broken; it is what the loss is made of.
LOSS_HINT = (
    "The loss of the latest round that updated. GRPO's loss is close to 0 by construction: each group's "
    "advantages average to zero and the answers were just sampled from the adapter being trained, so the loss "
    "says little while its gradient still moves the adapter. Watch reward and validation instead."
)


def tiles(rounds: Sequence[RoundRow]) -> list[Tile]:
    """Steps, Final Reward, Best Reward, Best Accuracy, Final Loss (001), over the rounds trained so far."""
    trained = _trained(rounds)
    return tiles_of(len(trained), *(known_values(trained, name) for name in ("reward", "accuracy", "loss")))


def known_values(rounds: Sequence[RoundRow], field: str) -> list[float]:
    """The rounds' values of `field`, those they have, in their order."""
    return [value for value in (getattr(r, field) for r in rounds) if value is not None]


def tiles_of(steps: int, rewards: Sequence[float], accuracies: Sequence[float], losses: Sequence[float]) -> list[Tile]:
    """The tiles from the trained rounds' count and the rewards, accuracies and losses they have, oldest first."""
    return [
        Tile("Steps", str(steps), "Rounds trained so far; each round is one update of the adapter."),
        Tile("Final Reward", _number(rewards[-1] if rewards else None), "The reward of the latest round."),
        Tile("Best Reward", _number(max(rewards) if rewards else None), "The highest reward of any round."),
        Tile(
            "Best Accuracy",
            "—" if not accuracies else f"{max(accuracies) * 100:.1f}%",
            "The highest share of right answers in a round, where the reward scores correctness as a part.",
        ),
        Tile("Final Loss", _number(losses[-1] if losses else None), LOSS_HINT),
    ]


def trends(rounds: Sequence[RoundRow]) -> list[Trend]:
    trained = _trained(rounds)
    return trends_of(known_values(trained, "accuracy"), known_values(trained, "reward"))


def trends_of(accuracies: Sequence[float], rewards: Sequence[float]) -> list[Trend]:
    """The Accuracy and Reward trends from the values the trained rounds have, oldest first."""
    found = [trend("Accuracy", accuracies), trend("Reward", rewards)]
    return [t for t in found if t is not None]


@dataclass(frozen=True)
class Line:
    """A line of a chart: its name, the round's figure it draws (None where the round has none) in % where
    `percent` says (to two places) and rounded to four places where `rounded` says, and its color."""

    name: str
    field: str
    color: str
    percent: bool = False
    rounded: bool = True

    @property
    def digits(self) -> int | None:
        """The places a point is rounded to (None: as it is): in % to two places, then to four, is two."""
        return 2 if self.percent else 4 if self.rounded else None

    def points(self, rounds: Sequence[RoundRow]) -> list[float | None]:
        """The line's points of `rounds` (None where a round has none), worked out a figure at a time over all of
        them."""
        values = list(map(attrgetter(self.field), rounds))
        digits, scale = self.digits, 100 if self.percent else 1
        if digits is None:
            return values
        return [None if value is None else round(value * scale, digits) for value in values]

    def texts(self, values: Sequence[float | None]) -> list[str]:
        """The line's points of its figure's `values` (None where a round has none) as JSON texts, those json.dumps
        writes of `points`, each written by printf's form and its trailing zeros cut: a third of the time of
        rounding each value and writing the list out, and quicker than one formatting of them all with a regular
        expression cutting the zeros (a 1,000-round run's first viewer writes ten lines of them). Values of 10^15
        and above, and those that are not numbers, as json.dumps writes them (1e+16, NaN)."""
        digits = self.digits
        if digits is None:
            return json_texts(list(values))
        scale, form = (100 if self.percent else 1), f"%.{digits}f"  # printf's form: the quickest of Python's
        texts = []
        for value in values:
            if value is None:
                texts.append("null")
            elif -1e15 < (scaled := value * scale) < 1e15:
                text = (form % scaled).rstrip("0")
                texts.append(text + "0" if text[-1] == "." else text)
            else:
                texts.append(json.dumps(round(scaled, digits)))
        return texts


def json_texts(values: list[Any]) -> list[str]:
    """Each value as JSON text: the list written out once (a number's text holds no ", ") and split again.

    >>> json_texts([1, 0.25, None]), json_texts([])
    (['1', '0.25', 'null'], [])
    """
    return json.dumps(values)[1:-1].split(", ") if values else []


# 000's Reward chart: Reward and Validation by round, 0-100%; round 0 has Validation only
REWARD_LINES = (
    Line("Reward", "reward", "#2952cc", percent=True, rounded=False),
    Line("Validation", "validation_reward", "#1a7f37", percent=True, rounded=False),
)


def reward_chart_document(x: Any, ys: Sequence[Any]) -> dict[str, Any]:
    """The Reward chart for the rounds `x` (every round, oldest first) and each of REWARD_LINES' points `ys`."""
    return {
        "x": x,
        "series": [{"name": line.name, "y": y, "color": line.color} for line, y in zip(REWARD_LINES, ys, strict=True)],
        "percent": True,
        "label": "Reward and validation by round",
    }


def reward_chart(rounds: Sequence[RoundRow]) -> dict[str, Any]:
    ordered = sorted(rounds, key=lambda r: r.round_number)
    return reward_chart_document([r.round_number for r in ordered],
                                 [line.points(ordered) for line in REWARD_LINES])


@dataclass(frozen=True)
class SmallChart:
    """A chart of the RL metrics over the trained rounds: its line on the left axis (in `unit`), and another on the
    right axis in % where it helps read the first (the signal beside the entropy, the cut-off share beside the
    answers' length). Drawn only where its line has a point; the line beside only where it has one."""

    title: str
    label: str
    unit: str  # the left axis's title; "%" draws it from 0 to 100%
    line: Line
    beside: Line | None = None  # on the right axis, in %

    @property
    def lines(self) -> tuple[Line, ...]:
        return (self.line,) if self.beside is None else (self.line, self.beside)

    def document(self, x: Any, y: Any, beside: Any = None) -> dict[str, Any]:
        """The chart for the rounds `x` and its lines' points; `beside` None: the line beside is not drawn."""
        series = [{"name": self.line.name, "y": y, "color": self.line.color}]
        if self.beside is not None and beside is not None:
            series.append({"name": self.beside.name, "y": beside, "color": self.beside.color, "axis": "y2"})
        return {"title": self.title, "label": self.label, "x": x, "series": series, "percent": self.unit == "%",
                "y_title": self.unit, "y2_title": "%" if len(series) > 1 else None}


# Accuracy, Loss, Entropy (with the Signal), Answer length (with the Cut-off share), Gradient norm and (with Epochs
# above 1) Clipped by round: the series the rounds logged, each with its axis's unit
SMALL_CHARTS = (
    SmallChart("Accuracy", "Share of right answers by round", "%",
               Line("Accuracy", "accuracy", "#2952cc", percent=True)),
    SmallChart("Loss", "Loss by round (close to 0 by construction in GRPO)", "loss",
               Line("Loss", "loss", "#b35900")),
    # no KL line: the update has no KL term (trainer/grpo.py), so KL would be a flat 0
    SmallChart("Entropy", "Mean token entropy of the sampled answers by round, and the share of prompts learned from "
               "(Signal)", "nats a token", Line("Entropy", "token_entropy", "#7a3fbf"),
               Line("Signal", "signal", "#2952cc", percent=True)),
    SmallChart("Answer length", "Mean tokens per sampled answer by round, and the share of answers cut off at Longest "
               "sampled answer", "tokens", Line("Answer length", "mean_answer_tokens", "#0f766e"),
               Line("Cut off", "cut_off", "#b91c1c", percent=True)),
    SmallChart("Gradient norm", "The update's gradient norm before clipping, by round", "norm",
               Line("Gradient norm", "grad_norm", "#475569")),
    # with Epochs above 1: how much of the passes after the first the clipped ratio held back
    SmallChart("Clipped", "Share of answer tokens the clip held back in the passes after the first, by round", "%",
               Line("Clipped", "clipped", "#be123c", percent=True)),
)


def small_charts(rounds: Sequence[RoundRow]) -> list[dict[str, Any]]:
    trained = _trained(rounds)
    x = [r.round_number for r in trained]
    drawn = []
    for chart in SMALL_CHARTS:
        ys = [line.points(trained) for line in chart.lines]
        if any(v is not None for v in ys[0]):
            beside = ys[1] if len(ys) > 1 and any(v is not None for v in ys[1]) else None
            drawn.append(chart.document(x, ys[0], beside))
    return drawn
