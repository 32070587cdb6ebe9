"""The spec of an SFT, DPO or Head run: the objective, the rows (messages; DPO's rejected answer), the settings.

jobs/ writes it like the RL spec (`to_dict()` → JSON) with `"objective": "sft"`, `"dpo"` or `"head"`; `python -m trainer
run SPEC.json` reads the objective and hands the file here instead of to the RL loop. Every setting is given, as the
run trains: a trial's `epochs` (one) and rows (at most 8 of each) are its own, and its `full_run` the run it prepares.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from trainer.spec import MaybeTrial, ModelRef, ResumeFrom, SpecError, StartAdapter, Storage, spec_from_dict

Objective = Literal["sft", "dpo", "head"]


@dataclass(frozen=True)
class TuneRow:
    """`prompt` is the conversation before the reference (the assistant's last reply); `rejected` is a DPO pair's
    other answer."""

    prompt: list[dict[str, str]]
    reference: str
    rejected: str | None = None


@dataclass(frozen=True)
class FullTuning:
    """A trial's full run, for the trial's estimate: its epochs over all of the version's training examples."""

    epochs: int
    train_examples: int


@dataclass(frozen=True)
class TuneSpec(MaybeTrial):
    run_id: str
    objective: Objective
    model: ModelRef
    train_rows: list[TuneRow]
    validation_rows: list[TuneRow]
    storage: Storage
    deadline: float
    epochs: int
    batch_size: int
    micro_batch_size: int
    learning_rate: float
    training_window: int
    lora_rank: int
    lora_alpha: int
    beta: float  # DPO's; SFT and Head ignore it
    seed: int
    quantization: str
    start_adapter: StartAdapter | None = None
    full_run: FullTuning | None = None  # a trial's: the full run it prepares; None for a full run
    resume: ResumeFrom | None = None  # a resumed run's step that ended its last finished epoch (`round` names it)

    def __post_init__(self) -> None:
        if self.objective not in ("sft", "dpo", "head"):
            raise SpecError(f"objective must be sft, dpo or head here, not {self.objective!r}")
        if not self.train_rows or not self.validation_rows:
            raise SpecError("train_rows and validation_rows must not be empty")
        if self.objective == "dpo" and any(row.rejected is None for row in self.train_rows):
            raise SpecError("DPO needs a rejected answer in every training row")
        if self.batch_size % self.micro_batch_size:
            raise SpecError("batch_size must be a multiple of micro_batch_size")

    @property
    def accumulation_steps(self) -> int:
        return self.batch_size // self.micro_batch_size

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TuneSpec:
        return spec_from_dict(cls, {"resume": None, **data}, row=TuneRow, full_run=FullTuning,
                              resume=lambda value: ResumeFrom(**value) if value else None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
