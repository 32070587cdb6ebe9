"""How far a run has come, in its objective's own words: RL counts rounds; SFT, DPO and Head count optimizer steps.

An RL run's share of rounds stays on its page once it ended (it says how far a run that stopped early got). An SFT,
DPO or Head run says its steps while it trains and nothing once it ended: its loss chart and "Finished all N steps"
say the rest, and it has no rounds, so "0% of rounds done" would be false.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.shell.templating import format_share
from domain.runs import objectives
from projections.rows import RunDetail, StepRow


@dataclass(frozen=True)
class Progress:
    share: float  # 0..1, the bar's value
    words: str  # beside the bar: "40% of rounds done", "3 of 12 steps done"
    title: str  # the bar's tooltip: "8 of 20 rounds done"


def progress_of(run: RunDetail, objective: str, latest_step: StepRow | None) -> Progress | None:
    """None where there is nothing true to say: a draft, a queued run, an SFT run before its first step or after
    its end. `latest_step` is the newest step an SFT, DPO or Head run logged."""
    if run.state in ("draft", "queued"):
        return None
    if objectives.is_rl(objective):
        if not run.rounds_total:
            return None
        done = f"{run.rounds_done} of {run.rounds_total} rounds done"
        return Progress(run.progress, f"{format_share(run.progress)} of rounds done", done)
    if not run.live or latest_step is None or not latest_step.steps:
        return None
    done = f"{latest_step.step} of {latest_step.steps} steps done"
    return Progress(latest_step.step / latest_step.steps, done, f"{done} (epoch {latest_step.epoch:.2f})")
