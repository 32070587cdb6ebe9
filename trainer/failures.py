"""What cuts a run short, raised by its stages and turned into its ending by the run (trainer/loop.py, with the
words of trainer/endings.py). Sampling's own (out of memory, interrupted) are trainer/sampling.py's, the update's
out of memory trainer/grpo_update.py's."""

from __future__ import annotations

from trainer.scoring import ScoredRound


class RunFailed(RuntimeError):
    """The run fails with this message (it names no prompt, answer or reference)."""


class RoundInterrupted(RuntimeError):
    """The time limit came while a round was running: its work is lost."""


class TooManyMetricFailures(RuntimeError):
    """More than a tenth of a round's graded answers failed the metric: `note` says so, `scored` is the round."""

    def __init__(self, note: str, scored: ScoredRound) -> None:
        super().__init__(note)
        self.note = note
        self.scored = scored
