"""What a training job reports about a run: one scored round, a trial's report."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

ReportT = TypeVar("ReportT", "RoundResult", "TrialReport")


def _from_known_fields(cls: type[ReportT], data: dict[str, Any]) -> ReportT:
    """Built from a stored report, passing over the fields this version no longer has (events keep old ones)."""
    known = {f.name for f in fields(cls)}
    return cls(**{key: value for key, value in data.items() if key in known})


@dataclass(frozen=True)
class RoundResult:
    """One scored round. Round 0 is the starting adapter on the validation sample: it has validation only.

    `signal` is the share of prompts whose answers did not all score alike (the table's Learned from);
    `cut_off` the share of answers that reached Longest sampled answer; shares are in [0, 1].
    `uniform_value` is the score every answer got when no prompt had a signal (for the no-signal message).
    `accuracy` is the mean "correct" part of the round's answers, for a reward with parts (001's Accuracy).
    `checkpoint_sha256` names the checkpoint the trainer left after the round (trainer/checkpoint.py).
    """

    round_number: int
    validation_reward: float
    reward: float | None = None
    signal: float | None = None
    cut_off: float | None = None
    metric_failures: int = 0
    graded_answers: int = 0
    updated: bool = False
    loss: float | None = None
    sampling_seconds: float = 0.0
    grading_seconds: float = 0.0
    update_seconds: float = 0.0
    validation_seconds: float = 0.0
    mean_answer_tokens: float | None = None
    token_entropy: float | None = None
    peak_memory_bytes: int | None = None
    uniform_value: float | None = None
    accuracy: float | None = None
    checkpoint_sha256: str | None = None  # the round's checkpoint, which a resumed run checks (none before resume)
    checkpoint_seconds: float | None = None
    # the update's passes (Epochs): the share of answer tokens the clip held back in the passes after the first
    # (None with one pass), and the gradient's norm before clipping, mean over the passes
    clipped: float | None = None
    grad_norm: float | None = None
    passes: int | None = None  # the update's passes over the answers (Epochs); None when it did not update
    # the reward's health: the round's answers that failed the metric, by kind (None when none did), and a custom
    # metric's sandbox batches that graded them, by outcome: "scored" when no answer of the batch failed, else the
    # kind of its first failure (None for a built-in reward, which runs no sandbox)
    failures_by_kind: dict[str, int] | None = None
    sandbox_batches: dict[str, int] | None = None
    # the reward's speed: grading seconds per graded answer over the round, median and 95th percentile (None when
    # no answer was graded, and for rounds recorded before they were measured)
    grading_seconds_median: float | None = None
    grading_seconds_p95: float | None = None
    # each prompt of the round (the run page's Prompts tab), as parallel lists in the round's order: "index" (in the
    # training prompts), "mean" score, "passed" answers (a score of at least 0.5), "taught" (its answers varied),
    # "tokens" of its answers, and "answers" per prompt; None for round 0 and for rounds recorded before it existed
    prompts: dict[str, Any] | None = None

    @property
    def total_seconds(self) -> float:
        return self.sampling_seconds + self.grading_seconds + self.update_seconds + self.validation_seconds

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoundResult:
        return _from_known_fields(cls, data)


@dataclass(frozen=True)
class StepLog:
    """One logged SFT or DPO optimizer step: `step` of `steps`, the training loss, and the validation loss when
    the step ended with a validation (each epoch's last step)."""

    step: int
    steps: int
    epoch: float
    loss: float
    seconds: float
    validation_loss: float | None = None
    checkpoint_sha256: str | None = None  # an epoch's last step: the epoch's checkpoint (trainer/tune_checkpoints.py)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrialReport:
    """A trial's report: what one round measured, and the estimate for the full run when it finished."""

    finished: bool
    formatting: str = ""  # e.g. "8 of 8 prompts fit", or the first problem found
    seconds_per_round: float | None = None
    peak_memory_bytes: int | None = None
    gpu_memory_bytes: int | None = None
    sampling_seconds: float | None = None
    grading_seconds: float | None = None
    update_seconds: float | None = None
    validation_seconds: float | None = None
    full_training_seconds: float | None = None
    full_training_rounds: int | None = None
    full_gpu_cost: float | None = None
    advice: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialReport:
        return _from_known_fields(cls, data)
