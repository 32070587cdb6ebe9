"""001's RL Metrics from the rounds read model: Accuracy and Reward trends, the stat tiles, and chart data.

Pure functions of the rounds (newest first, as the read model gives them); nothing here reads a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
    rewards = [r.reward for r in trained if r.reward is not None]
    accuracies = [r.accuracy for r in trained if r.accuracy is not None]
    losses = [r.loss for r in trained if r.loss is not None]
    return [
        Tile("Steps", str(len(trained)), "Rounds trained so far; each round is one update of the adapter."),
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
    found = [trend("Accuracy", [r.accuracy for r in trained]), trend("Reward", [r.reward for r in trained])]
    return [t for t in found if t is not None]


def _percent(value: float | None) -> float | None:
    return None if value is None else round(value * 100, 2)


def reward_chart(rounds: Sequence[RoundRow]) -> dict[str, Any]:
    """000's Reward chart: Reward and Validation by round, 0-100%; round 0 has Validation only."""
    ordered = sorted(rounds, key=lambda r: r.round_number)
    return {
        "x": [r.round_number for r in ordered],
        "series": [
            {"name": "Reward", "y": [_percent(r.reward) for r in ordered], "color": "#2952cc"},
            {"name": "Validation", "y": [_percent(r.validation_reward) for r in ordered], "color": "#1a7f37"},
        ],
        "percent": True,
        "label": "Reward and validation by round",
    }


@dataclass(frozen=True)
class SmallChart:
    """A chart of the RL metrics: its line on the left axis (in `unit`), and another on the right axis in % where
    it helps read the first (the signal beside the entropy, the cut-off share beside the answers' length)."""

    title: str
    label: str
    unit: str  # the left axis's title; "%" draws it from 0 to 100%
    values: list[float | None]
    color: str
    beside: tuple[str, list[float | None], str] | None = None  # (name, values in %, color), on the right axis

    def drawn(self, x: list[int]) -> dict[str, Any]:
        series = [{"name": self.title, "y": _rounded(self.values), "color": self.color}]
        if self.beside is not None and any(v is not None for v in self.beside[1]):
            name, values, color = self.beside
            series.append({"name": name, "y": _rounded(values), "color": color, "axis": "y2"})
        return {"title": self.title, "label": self.label, "x": x, "series": series, "percent": self.unit == "%",
                "y_title": self.unit, "y2_title": "%" if len(series) > 1 else None}


def _rounded(values: list[float | None]) -> list[float | None]:
    return [None if v is None else round(v, 4) for v in values]


def small_charts(rounds: Sequence[RoundRow]) -> list[dict[str, Any]]:
    """Accuracy, Loss, Entropy (with the Signal), Answer length (with the Cut-off share), Gradient norm and (with
    Epochs above 1) Clipped by round: the series the rounds logged, each with its axis's unit."""
    trained = _trained(rounds)
    x = [r.round_number for r in trained]
    signal = ("Signal", [_percent(r.signal) for r in trained], "#2952cc")
    cut_off = ("Cut off", [_percent(r.cut_off) for r in trained], "#b91c1c")
    charts = [
        SmallChart("Accuracy", "Share of right answers by round", "%", [_percent(r.accuracy) for r in trained],
                   "#2952cc"),
        SmallChart("Loss", "Loss by round (close to 0 by construction in GRPO)", "loss",
                   [r.loss for r in trained], "#b35900"),
        # no KL line: the update has no KL term (trainer/grpo.py), so KL would be a flat 0
        SmallChart("Entropy", "Mean token entropy of the sampled answers by round, and the share of prompts "
                   "learned from (Signal)", "nats a token", [r.token_entropy for r in trained], "#7a3fbf", signal),
        SmallChart("Answer length", "Mean tokens per sampled answer by round, and the share of answers cut off at "
                   "Longest sampled answer", "tokens", [r.mean_answer_tokens for r in trained], "#0f766e", cut_off),
        SmallChart("Gradient norm", "The update's gradient norm before clipping, by round", "norm",
                   [r.grad_norm for r in trained], "#475569"),
        # with Epochs above 1: how much of the passes after the first the clipped ratio held back
        SmallChart("Clipped", "Share of answer tokens the clip held back in the passes after the first, by round",
                   "%", [_percent(r.clipped) for r in trained], "#be123c"),
    ]
    return [chart.drawn(x) for chart in charts if any(v is not None for v in chart.values)]
