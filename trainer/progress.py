"""Progress records: what the trainer tells its supervisor, one JSON object per line on stdout.

Every record has a `type`. In the order a run writes them:

- `prepared`: the rows fit, the reward works, the model is loaded.
- `round_scored`: round 0 (validation only), then one per finished round, with its checkpoint's sha256 (a
  resumed run starts with the round after the one it resumes from).
- `step_logged`: SFT and DPO instead of rounds: one per optimizer step, with the validation loss at each epoch's end.
- `stopped`: the run ended early and keeps its best adapter (time_limit, metric_failures, out_of_memory), with the
  product's note and log line. Written before the adapter is saved.
- `adapter_saved`: where the kept adapter is, with its weights file's sha256 and size.
- `completed`: all rounds done (or a stop after the adapter was saved): the run is over and succeeded.
- `trial_report`: a trial's measurements and estimate (after `adapter_saved`, or alone when a trial fails).
- `failed`: the run failed; the message names no prompt, answer or reference.

`record_from_dict` reads a line back (jobs/ uses it): `record_from_dict(json.loads(line))`.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import IO, Any, ClassVar, Literal

from domain.runs import messages

StopReason = Literal["time_limit", "metric_failures", "out_of_memory"]


@dataclass(frozen=True)
class Prepared:
    type: ClassVar[str] = "prepared"
    train_rows: int
    validation_prompts: int
    seconds: float


@dataclass(frozen=True)
class PhaseSeconds:
    sampling: float = 0.0
    grading: float = 0.0
    update: float = 0.0
    validation: float = 0.0

    @property
    def total(self) -> float:
        return self.sampling + self.grading + self.update + self.validation


@dataclass(frozen=True)
class RoundScored:
    """One round's numbers. Round 0 has only the validation fields (the others are None)."""

    type: ClassVar[str] = "round_scored"
    round: int
    rounds: int
    reward: float | None
    signal: float | None  # share of prompts learned from, in [0, 1]
    cut_off: float | None  # share of answers cut off, in [0, 1]
    metric_failures: int
    graded_answers: int
    failure_kinds: list[str]
    updated: bool
    loss: float | None
    validation_reward: float
    best_round: int
    seconds: PhaseSeconds
    mean_answer_tokens: float | None
    token_entropy: float | None
    peak_memory_bytes: int
    accuracy: float | None = None  # mean "correct" part of the answers, for a reward with parts (001's Accuracy)
    # the round's checkpoint (trainer/checkpoint.py): its sha256, which a resumed run checks, and its writing time
    checkpoint_sha256: str | None = None
    checkpoint_seconds: float | None = None
    # Epochs (trainer/grpo_update.py): the share of tokens the clip held back in the passes after the first, and the
    # gradient's norm before clipping (mean over the passes)
    clipped: float | None = None
    grad_norm: float | None = None
    passes: int | None = None  # the update's passes over the answers; None when the round did not update
    # the reward's health: the answers that failed the metric by kind, e.g. {"timeout": 8, "execution": 2} (None
    # when none failed), and a custom metric's sandbox batches that graded the round's answers, by outcome
    # ("scored", or the kind of the batch's first failure), e.g. {"scored": 15, "timeout": 1}; None for a built-in
    # reward, which runs no sandbox
    failures_by_kind: dict[str, int] | None = None
    sandbox_batches: dict[str, int] | None = None
    # the reward's speed: grading seconds per graded answer, median and 95th percentile (trainer/scoring.py says how
    # an answer's seconds are measured); None when no answer was graded
    grading_seconds_median: float | None = None
    grading_seconds_p95: float | None = None
    # each prompt of the round in a few numbers (trainer/prompt_summary.py), for the run page's Prompts tab
    prompts: dict[str, Any] | None = None

    def log_line(self) -> str:
        """The Training logs line, exactly as PRODUCT.md gives it.

        >>> RoundScored(3, 20, 0.41, 0.62, 0.02, 0, 128, [], True, 0.012, 0.47, 3,
        ...             PhaseSeconds(81.2, 2.1, 64.0, 9.5), 4.0, 1.0, 0).log_line()
        'Round 3 of 20: reward 0.4100, signal 62%, cut off 2%, 0 metric failures, updated, loss 0.0120, \
validation reward 0.4700 (best round 3); seconds: sampling 81.2, grading 2.1, update 64.0, validation 9.5.'
        """
        s = self.seconds
        result = {
            "round_number": self.round, "validation_reward": self.validation_reward, "reward": self.reward,
            "signal": self.signal, "cut_off": self.cut_off, "metric_failures": self.metric_failures,
            "updated": self.updated, "loss": self.loss, "passes": self.passes, "clipped": self.clipped,
            "sampling_seconds": s.sampling, "grading_seconds": s.grading, "update_seconds": s.update,
            "validation_seconds": s.validation,
        }
        return messages.round_log_line(result, self.rounds, self.best_round)


@dataclass(frozen=True)
class StepLogged:
    """An SFT or DPO optimizer step: `step` of `steps` (all epochs), the training loss, and the validation loss
    when the step ended an epoch (validation runs once per epoch)."""

    type: ClassVar[str] = "step_logged"
    step: int
    steps: int
    epoch: float
    loss: float
    seconds: float
    validation_loss: float | None = None
    checkpoint_sha256: str | None = None  # an epoch's last step of a full run: that epoch's checkpoint


@dataclass(frozen=True)
class Stopped:
    """An early end that keeps the best adapter. `note` is the product's sentence (None for the time limit);
    `log_line` is the Training logs line."""

    type: ClassVar[str] = "stopped"
    reason: StopReason
    after_round: int
    rounds: int
    best_round: int
    note: str | None
    log_line: str


@dataclass(frozen=True)
class AdapterSaved:
    """The kept adapter: a folder (local path or s3:// URL); sha256 and size are of adapter_model.safetensors."""

    type: ClassVar[str] = "adapter_saved"
    location: str
    sha256: str
    size_bytes: int
    best_round: int


@dataclass(frozen=True)
class Completed:
    """The run is over and succeeded. `note` says when no round beat the starting point."""

    type: ClassVar[str] = "completed"
    rounds_done: int
    best_round: int
    best_validation_reward: float
    note: str | None = None


@dataclass(frozen=True)
class Failed:
    type: ClassVar[str] = "failed"
    message: str


@dataclass(frozen=True)
class TrialReport:
    """A trial's Training trial report. Estimates are None when the trial did not finish or has no price."""

    type: ClassVar[str] = "trial_report"
    finished: bool
    formatting: dict[str, Any]
    seconds_per_round: float | None
    peak_memory_bytes: int
    memory_total_bytes: int | None
    seconds: PhaseSeconds
    preparation_seconds: float
    full_training_seconds: float | None
    full_training_rounds: int
    full_gpu_cost: float | None
    advice: list[str] = field(default_factory=list)


ProgressRecord = Prepared | RoundScored | StepLogged | Stopped | AdapterSaved | Completed | Failed | TrialReport
Emit = Callable[[ProgressRecord], None]  # where a run's records go: stdout's JSON lines, or a test's list
RECORD_TYPES: dict[str, type] = {
    cls.type: cls
    for cls in (Prepared, RoundScored, StepLogged, Stopped, AdapterSaved, Completed, Failed, TrialReport)
}


def record_to_dict(record: ProgressRecord) -> dict[str, Any]:
    return {"type": record.type, **asdict(record)}


def record_from_dict(data: dict[str, Any]) -> ProgressRecord:
    values = dict(data)
    cls = RECORD_TYPES[values.pop("type")]
    if "seconds" in values and isinstance(values["seconds"], dict):
        values["seconds"] = PhaseSeconds(**values["seconds"])
    return cls(**values)


def write_json_line(record: dict[str, Any], stream: IO[str] | None = None) -> None:
    """One record to the supervisor as one JSON line (stdout unless told), flushed so it sees it at once: a run's
    records, and an evaluation's or a merge's plain ones."""
    stream = stream or sys.stdout
    stream.write(json.dumps(record) + "\n")
    stream.flush()


class JsonLinesEmitter:
    """Writes each record as one JSON line and flushes, so the supervisor sees it at once."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, record: ProgressRecord) -> None:
        write_json_line(record_to_dict(record), self.stream)


def attempted(work: Callable[[], Any], refused: type[Exception], what: str,
              emit: Callable[[dict[str, Any]], None]) -> Any:
    """What `work()` returns, or None once a `failed` record is written: a `refused` failure in its own words,
    anything else by its type alone (the message names no prompt or answer; the log has the details). The one
    ending of an evaluation, a probe and a re-scoring that went wrong."""
    try:
        return work()
    except refused as failure:
        emit({"type": "failed", "message": str(failure)})
    except Exception as error:
        logging.getLogger(__name__).exception("the %s failed", what)
        emit({"type": "failed", "message": f"{type(error).__name__}: {what} stopped; inspect logs"})
    return None
