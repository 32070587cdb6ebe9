"""The run spec: everything the trainer needs to do one RL run, as one typed, JSON-round-trippable object.

jobs/ writes it from the run's settings (jobs/specs.py: `RunSpec.to_dict()` → JSON file) and starts
`python -m trainer run SPEC.json`; the trainer reads it with `RunSpec.from_dict`. Setting names are the domain's
and the API's. Every setting is given: the product's defaults and bounds are the domain's
(domain/runs/run_settings.py), and so is a trial's rule, whose result the spec carries (`rounds`,
`prompts_per_round` and `validation_sample_size` are what this run does; a trial's `full_run` is the run it
prepares). Credentials never appear here: S3 keys come from the environment (boto3's usual chain).

Example (a full run of the Demo project's numbers for the tiny model):

    {"run_id": "r1", "model": {"path_or_id": "data/models/tiny-math"}, "storage": {"location": "data/storage"},
     "reward": {"config": {"preset": "verifiable", "metric": "math_pairs"}},
     "train_rows": [{"prompt": [{"role": "user", "content": "What is 2+3?"}], "reference": "5"}],
     "validation_rows": [{"prompt": [{"role": "user", "content": "What is 4*5?"}], "reference": "20"}],
     "deadline": "2030-01-01T00:00:00+00:00", "rounds": 40, "prompts_per_round": 16, "validation_sample_size": 128,
     "answers_per_prompt": 8, "max_answer_tokens": 16, "learning_rate": 0.0005, "training_window": 256,
     "micro_batch_size": 32, "lora_rank": 16, "lora_alpha": 32, "loss_type": "grpo", "generation_backend": null,
     "vllm_gpu_memory": 0.5, "quantization": "none", "seed": 0}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, Literal, TypeVar

LossType = Literal["grpo", "dapo", "dr_grpo"]
GenerationBackend = Literal["vllm", "transformers"]
Quantization = Literal["none", "8bit", "4bit"]
SpecT = TypeVar("SpecT")


class SpecError(ValueError):
    """The spec is malformed; the message says which field."""


@dataclass(frozen=True)
class ModelRef:
    """A hub id or a local folder, and the revision to pin (ignored for a local folder)."""

    path_or_id: str
    revision: str | None = None


@dataclass(frozen=True)
class StartAdapter:
    """A finished run's adapter folder (local path or s3:// URL) and the checksum and size saved with that run.

    `sha256` and `size_bytes` are those of the adapter's weights file (adapter_model.safetensors).
    """

    path: str
    sha256: str
    size_bytes: int


@dataclass(frozen=True)
class ResumeFrom:
    """Go on after finished round `round` from its checkpoint (trainer/checkpoint.py), whose sha256 that round's
    progress record gave."""

    round: int
    sha256: str


@dataclass(frozen=True)
class RewardSpec:
    """The reward: a `RewardConfig` dict for domain/rewards, and the custom metric's source when the metric is
    `custom.<id>` (run in the trainer's sandbox)."""

    config: dict[str, Any]
    custom_metric_source: str | None = None
    custom_metric_name: str | None = None  # for the product's note, e.g. "Custom metric name (vV) failed ..."
    custom_metric_version: str | None = None


@dataclass(frozen=True)
class Row:
    """One example: the prompt messages (ending with a user turn) and the reference answer."""

    prompt: list[dict[str, str]]
    reference: str


@dataclass(frozen=True)
class Storage:
    """Where rollouts and the adapter go: a local folder, or `s3://bucket/prefix` with an optional endpoint URL."""

    location: str
    endpoint_url: str | None = None

    @property
    def is_s3(self) -> bool:
        return self.location.startswith("s3://")


@dataclass(frozen=True)
class FullRun:
    """A trial's full run, for the trial's report: its estimate (Rounds, Prompts per round and validation sample
    of the full run), its cost (the GPU's price) and its advice (the full run's Time limit)."""

    rounds: int
    prompts_per_round: int
    validation_sample_size: int
    time_limit_hours: float
    price_per_hour: float | None  # None: the GPU has no declared price, so the report has no cost


class MaybeTrial:
    """A spec that may be a trial's (RL here, SFT, DPO or Head in trainer/tune_spec.py): a trial carries the full
    run it prepares in `full_run`, which is None for a full run."""

    full_run: object | None

    @property
    def trial(self) -> bool:
        return self.full_run is not None


@dataclass(frozen=True)
class RunSpec(MaybeTrial):
    """One RL run, as it trains: `rounds` rounds of `prompts_per_round` prompts, validated on a sample of
    `validation_sample_size` prompts (a trial's are its own: one round of at most 8). `lora_rank`/`lora_alpha`
    apply to a new adapter only."""

    run_id: str
    model: ModelRef
    reward: RewardSpec
    train_rows: list[Row]
    validation_rows: list[Row]
    storage: Storage
    deadline: float  # seconds since the epoch; the run's Time limit
    rounds: int
    prompts_per_round: int
    validation_sample_size: int
    answers_per_prompt: int
    max_answer_tokens: int
    learning_rate: float
    training_window: int
    micro_batch_size: int
    lora_rank: int
    lora_alpha: int
    loss_type: LossType
    generation_backend: GenerationBackend | None  # None: vLLM with a GPU, Transformers otherwise
    vllm_gpu_memory: float
    quantization: Quantization
    seed: int
    start_adapter: StartAdapter | None = None
    full_run: FullRun | None = None  # a trial's: the full run it prepares; None for a full run
    resume: ResumeFrom | None = None  # a resumed run's last finished round; None for a run from round 0
    epochs: int = 1  # passes over each round's answers, one optimizer step each (TRL's num_iterations)
    clip_low: float = 0.2  # the clipped ratio's range, 1 - clip_low to 1 + clip_high (acts from the second pass)
    clip_high: float = 0.2
    max_grad_norm: float | None = None  # the gradient's norm is clipped to it before each step; None: never

    def __post_init__(self) -> None:
        if not 1 <= self.epochs <= 4:
            raise SpecError(f"epochs must be from 1 to 4, not {self.epochs!r}")
        if self.loss_type not in ("grpo", "dapo", "dr_grpo"):
            raise SpecError(f"loss_type must be grpo, dapo or dr_grpo, not {self.loss_type!r}")
        if self.generation_backend not in (None, "vllm", "transformers"):
            raise SpecError(f"generation_backend must be vllm or transformers, not {self.generation_backend!r}")
        if self.quantization not in ("none", "8bit", "4bit"):
            raise SpecError(f"quantization must be none, 8bit or 4bit, not {self.quantization!r}")
        if self.answers_per_prompt < 2:
            raise SpecError("answers_per_prompt must be at least 2: GRPO compares answers to the same prompt")
        if not self.train_rows:
            raise SpecError("train_rows is empty")
        if not self.validation_rows:
            raise SpecError("validation_rows is empty")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        return spec_from_dict(cls, {"resume": None, **data}, row=Row, full_run=FullRun,
                              reward=lambda value: RewardSpec(**value),
                              resume=lambda value: ResumeFrom(**value) if value else None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def spec_from_dict(
    cls: type[SpecT], data: dict[str, Any], *, row: type, full_run: type, **own: Callable[[Any], Any]
) -> SpecT:
    """A training spec (RL here, SFT, DPO or Head in trainer/tune_spec.py) from its JSON object: the parts every
    objective has are built here, with the objective's `row` and `full_run` types; `own` builds the spec's other
    nested fields from their values. An unknown, missing or malformed field raises SpecError naming it."""
    unknown = set(data) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
    if unknown:
        raise SpecError(f"unknown spec field(s): {', '.join(sorted(unknown))}")
    values = dict(data)
    try:
        values["model"] = ModelRef(**data["model"])
        for name, build in own.items():
            values[name] = build(data[name])
        storage = data["storage"]
        values["storage"] = Storage(location=storage) if isinstance(storage, str) else Storage(**storage)
        values["train_rows"] = [row(**each) for each in data["train_rows"]]
        values["validation_rows"] = [row(**each) for each in data["validation_rows"]]
        values["start_adapter"] = StartAdapter(**data["start_adapter"]) if data.get("start_adapter") else None
        values["full_run"] = full_run(**data["full_run"]) if data.get("full_run") else None
        values["deadline"] = parse_deadline(data["deadline"])
        return cls(**values)
    except KeyError as missing:
        raise SpecError(f"the spec has no {missing.args[0]}") from None
    except TypeError as error:
        raise SpecError(f"malformed spec: {error}") from None


def parse_deadline(value: str | float | int) -> float:
    """An ISO 8601 time (with a zone) or seconds since the epoch, as seconds since the epoch.

    >>> parse_deadline("2030-01-01T00:00:00+00:00")
    1893456000.0
    """
    if isinstance(value, int | float):
        return float(value)
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise SpecError("deadline needs a time zone, e.g. 2030-01-01T00:00:00+00:00")
    return moment.timestamp()
