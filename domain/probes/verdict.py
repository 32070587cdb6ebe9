"""Whether a run would learn from a reward, in words, from a probe's summary (domain/probes/summary.py).

GRPO learns only from prompts whose answers did not all score the same (000: "A prompt whose answers all scored
alike has nothing to teach, so it is skipped"), so the share of such prompts is the signal a round would have:

- NONE: no prompt varied. Every round would skip every prompt; a run where no round has a signal fails.
- under WEAK_BELOW (a quarter): a weak signal. Most of each round's sampling is spent on prompts that teach
  nothing, and a round's update rests on a handful of prompts, so it is noisy.
- under STRONG_FROM (three fifths): a usable signal.
- from STRONG_FROM: a strong signal: most prompts teach something every round.

Two more things a probe can tell before a run spends its GPU: answers cut off (they score 0, whatever they say) past
CUT_OFF_WARNING, and a metric that fails on more than a tenth of its graded answers, which stops a run (000).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

WEAK_BELOW = 0.25
STRONG_FROM = 0.60
CUT_OFF_WARNING = 0.10
METRIC_FAILURES_STOP = 0.10  # 000: more than a tenth of a round's graded answers stops a run

NONE, WEAK, USABLE, STRONG = "none", "weak", "usable", "strong"
SIGNAL_NAMES = {NONE: "No signal", WEAK: "Weak signal", USABLE: "Usable signal", STRONG: "Strong signal"}


@dataclass(frozen=True)
class Verdict:
    signal: str  # NONE, WEAK, USABLE or STRONG
    headline: str
    advice: list[str]

    @property
    def name(self) -> str:
        return SIGNAL_NAMES[self.signal]

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "name": self.name, "headline": self.headline, "advice": self.advice}


def signal_of(varied_share: float) -> str:
    """
    >>> [signal_of(s) for s in (0.0, 0.1, 0.25, 0.59, 0.6, 1.0)]
    ['none', 'weak', 'usable', 'usable', 'strong', 'strong']
    """
    if varied_share <= 0.0:
        return NONE
    if varied_share < WEAK_BELOW:
        return WEAK
    return USABLE if varied_share < STRONG_FROM else STRONG


def verdict(summary: Mapping[str, Any]) -> Verdict:
    """The probe's verdict in the console's words.

    >>> base = {"prompts": 64, "answers_per_prompt": 8, "mean_score": 0.3, "cut_off_share": 0.0,
    ...         "metric_failures": 0, "graded": 512, "failures_by_kind": {}}
    >>> print(verdict({**base, "varied_prompts": 12, "varied_share": 12 / 64}).headline)
    12 of 64 prompts have answers that differ: expect a weak signal; most of each round would teach nothing.
    >>> v = verdict({**base, "varied_prompts": 0, "varied_share": 0.0, "mean_score": 0.0})
    >>> print(v.headline)
    None of 64 prompts has answers that differ: a run would learn nothing from this reward.
    >>> print(v.advice[0])
    Every answer scored 0: give the reward partial credit, start from an SFT adapter, or check the reward.
    >>> print(verdict({**base, "varied_prompts": 40, "varied_share": 40 / 64}).headline)
    40 of 64 prompts have answers that differ: expect a strong signal; most prompts would teach something each round.
    >>> verdict({**base, "varied_prompts": 40, "varied_share": 0.625, "cut_off_share": 0.2}).advice
    ['20% of the answers were cut off and score 0: raise Longest sampled answer (tokens).']
    """
    prompts, varied = int(summary["prompts"]), int(summary["varied_prompts"])
    signal = signal_of(float(summary["varied_share"]))
    if signal == NONE:
        headline = f"None of {prompts} prompts has answers that differ: a run would learn nothing from this reward."
    else:
        expectation = {
            WEAK: "expect a weak signal; most of each round would teach nothing",
            USABLE: "expect a usable signal; a run would learn from these prompts",
            STRONG: "expect a strong signal; most prompts would teach something each round",
        }[signal]
        headline = f"{varied} of {prompts} prompts have answers that differ: {expectation}."
    advice = []
    if signal in (NONE, WEAK):
        mean = float(summary["mean_score"])
        if signal == NONE and mean in (0.0, 1.0):
            advice.append(f"Every answer scored {mean:g}: " + (
                "give the reward partial credit, start from an SFT adapter, or check the reward." if mean == 0.0
                else "these prompts are already solved; choose harder ones."))
        else:
            advice.append("Give the reward partial credit, sample more answers per prompt, or start from an SFT "
                          "adapter.")
    cut_off = float(summary["cut_off_share"])
    if cut_off > CUT_OFF_WARNING:
        advice.append(f"{cut_off * 100:.0f}% of the answers were cut off and score 0: raise Longest sampled answer "
                      "(tokens).")
    failed, graded = int(summary["metric_failures"]), int(summary["graded"])
    if failed:
        kinds = ", ".join(sorted(summary.get("failures_by_kind") or {}))
        stops = graded and failed / graded > METRIC_FAILURES_STOP
        advice.append(f"The metric failed on {failed} of {graded} graded answers ({kinds})" + (
            ": more than a tenth, which stops a run. Make the metric handle any text." if stops
            else ". Make the metric handle any text."))
    return Verdict(signal, headline, advice)


def most_informative_first(per_prompt: Mapping[str, list[Any]]) -> list[int]:
    """Positions in the per-prompt lists, the prompts a round would learn most from first: the larger the spread of
    their answers' scores (their standard deviation, which scales GRPO's advantages), the earlier; among equals, the
    mean nearest one half, then the order sampled.

    >>> most_informative_first({"std": [0.0, 0.5, 0.2, 0.5], "mean": [1.0, 0.5, 0.1, 0.9]})
    [1, 3, 2, 0]
    """
    count = len(per_prompt["std"])
    return sorted(range(count), key=lambda i: (-per_prompt["std"][i], abs(per_prompt["mean"][i] - 0.5), i))
