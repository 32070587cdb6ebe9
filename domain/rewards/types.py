"""The batch interface every reward implements: built-in metrics here, custom metrics in the trainer's sandbox."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

# Why an answer scored 0 without being judged: the metric raised (execution), returned something that is not a
# number in [0, 1] (result), or its batch ran out of time, memory or printed too much (timeout, memory, output).
FailureKind = Literal["execution", "result", "timeout", "memory", "output"]
FAILURE_KINDS: tuple[FailureKind, ...] = ("execution", "result", "timeout", "memory", "output")
# A custom metric's sandbox grades answers in batches: a batch "scored" when none of its answers failed, else its
# outcome is the kind of its first failure.
SCORED_BATCH = "scored"
BATCH_OUTCOMES: tuple[str, ...] = (SCORED_BATCH, *FAILURE_KINDS)


@dataclass(frozen=True)
class AnswerScore:
    """The score of one answer against its reference.

    `value` is in [0, 1] and is 0 when `failure` is set. `parts` holds the named components where the reward has
    them, e.g. {"correct": 1.0, "format": 0.0} for a built-in verifiable task with the format bonus.
    """

    value: float
    failure: FailureKind | None = None
    parts: dict[str, float] = field(default_factory=dict)

    @classmethod
    def failed(cls, kind: FailureKind) -> AnswerScore:
        return cls(value=0.0, failure=kind)


class Grader(Protocol):
    """Scores a batch of answers against their references, one score per answer, in order."""

    @property
    def label(self) -> str:
        """The reward as a person reads it, e.g. "Token F1 · Q&A"."""
        ...

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]: ...
