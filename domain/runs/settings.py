"""Every RL setting of a run: its form metadata, its bounds and the parsers of the API body and the form.

The bounds are PRODUCT.md's "Numbers the documents left out". A message names the field by its form label and
states what is allowed, so the same words serve the form, the API and the event that refuses nothing twice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from domain.errors import SettingsInvalid
from domain.runs import objectives

Kind = Literal["int", "float", "choice", "bool", "text"]
Section = Literal["Run", "Reinforcement learning", "SFT and DPO", "Reward", "Advanced settings"]
RunKind = Literal["full", "trial"]

TRIAL_MAX_PROMPTS = 8  # a trial trains on at most 8 training prompts and scores at most 8 validation prompts


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    kind: Kind
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[tuple[str, str], ...] = ()  # (value, label)
    hint: str = ""
    section: Section = "Advanced settings"
    optional: bool = False  # None (empty in the form) is allowed

    def bounds_message(self) -> str:
        if self.name == "price_limit_per_hour":
            return f"{self.label} must be a number above 0, or empty for no limit."
        if self.kind == "choice":
            return f"{self.label} must be one of: {', '.join(value for value, _ in self.choices)}."
        noun = "a whole number" if self.kind == "int" else "a number"
        return f"{self.label} must be {noun} from {_number(self.minimum)} to {_number(self.maximum)}."


def _number(value: float | None) -> str:
    """1000 -> "1,000", 1e-07 -> "1e-7", 0.95 -> "0.95"."""
    if value is None:
        return ""
    if value != 0 and abs(value) < 0.001 + 1e-12:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:g}"


FIELDS: list[FieldSpec] = [
    FieldSpec(
        "time_limit_hours",
        "Time limit (hours)",
        "float",
        2.0,
        0.1,
        168,
        section="Run",
        hint="Training stops about 3 minutes before the limit, to save the adapter.",
    ),
    FieldSpec(
        "price_limit_per_hour",
        "Price limit ($/hour)",
        "float",
        None,
        0,
        None,
        section="Run",
        optional=True,
        hint="Empty for no limit.",
    ),
    FieldSpec(
        "trial_minutes",
        "Minutes",
        "int",
        20,
        5,
        60,
        section="Run",
        hint="A trial's own limit (one round, or for SFT, DPO and Head one epoch, on up to 8 examples), then the "
        "GPU is released.",
    ),
    FieldSpec(
        "model_revision",
        "Model revision",
        "text",
        None,
        section="Run",
        optional=True,
        hint="A commit, tag or branch of the model; empty pins the project's revision, or main.",
    ),
    FieldSpec(
        "start_run",
        "Start from",
        "text",
        None,
        section="Reinforcement learning",
        optional=True,
        hint="A finished full run of this project with an adapter. Its adapter size and scaling apply.",
    ),
    FieldSpec("rounds", "Rounds", "int", 20, 1, 1000, section="Reinforcement learning"),
    FieldSpec("prompts_per_round", "Prompts per round", "int", 64, 1, 1024, section="Reinforcement learning"),
    FieldSpec("answers_per_prompt", "Answers per prompt", "int", 8, 2, 64, section="Reinforcement learning"),
    FieldSpec(
        "max_answer_tokens",
        "Longest sampled answer (tokens)",
        "int",
        512,
        16,
        16384,
        section="Reinforcement learning",
        hint="An answer cut off at this length scores 0.",
    ),
    FieldSpec(
        "reward",
        "Reward",
        "text",
        None,
        section="Reward",
        optional=True,
        hint="The metric that scores each sampled answer from 0 to 1.",
    ),
    FieldSpec("learning_rate", "Learning rate", "float", 0.000005, 1e-7, 1e-3),
    FieldSpec(
        "training_window",
        "Training window (tokens)",
        "int",
        2048,
        128,
        131072,
        hint="Each example must fit: for RL, each prompt and the longest sampled answer.",
    ),
    FieldSpec(
        "micro_batch_size",
        "Micro batch size",
        "int",
        8,
        1,
        64,
        hint="Answers (RL) or examples (SFT, DPO, Head) per forward/backward pass.",
    ),
    FieldSpec("lora_rank", "Adapter size (LoRA rank)", "int", 16, 4, 128),
    FieldSpec("lora_alpha", "Adapter scaling (LoRA alpha)", "int", 32, 4, 256),
    FieldSpec(
        "loss_type",
        "Loss type",
        "choice",
        "grpo",
        choices=(("grpo", "GRPO"), ("dapo", "DAPO"), ("dr_grpo", "Dr. GRPO")),
    ),
    FieldSpec(
        "generation_backend",
        "Generation backend",
        "choice",
        "auto",
        choices=(
            ("auto", "vLLM (colocate) with a GPU, Transformers otherwise"),
            ("vllm", "vLLM (colocate)"),
            ("transformers", "Transformers"),
        ),
    ),
    FieldSpec("vllm_gpu_memory", "GPU memory for vLLM", "float", 0.5, 0.1, 0.95),
    FieldSpec(
        "quantization",
        "Quantization",
        "choice",
        "none",
        choices=(("none", "None"), ("8bit", "8-bit"), ("4bit", "4-bit (GPU only)")),
    ),
    FieldSpec("seed", "Seed", "int", 0, 0, 2_147_483_647),
]
# The Training objective and the settings only SFT and DPO have (domain/runs/objectives.py), beside FIELDS.
OBJECTIVE_FIELD = FieldSpec(
        "objective",
        "Training objective",
        "choice",
        objectives.RL,
        choices=objectives.OBJECTIVE_CHOICES,
        section="Run",
        hint="SFT first when the model rarely gets an answer right, then RL from that adapter.",
    )
TUNING_FIELDS: list[FieldSpec] = [
    FieldSpec(name, label, kind, default, low, high, hint=hint, section="SFT and DPO")  # type: ignore[arg-type]
    for name, label, kind, default, low, high, hint in objectives.OBJECTIVE_SETTINGS
]
ALL_FIELDS: list[FieldSpec] = [OBJECTIVE_FIELD, *FIELDS, *TUNING_FIELDS]
FIELDS_BY_NAME: dict[str, FieldSpec] = {spec.name: spec for spec in ALL_FIELDS}

RL_FIELDS = ("rounds", "prompts_per_round", "answers_per_prompt", "max_answer_tokens", "start_run", "reward")
ADVANCED_FIELDS = (
    "learning_rate",
    "training_window",
    "micro_batch_size",
    "lora_rank",
    "lora_alpha",
    "loss_type",
    "generation_backend",
    "vllm_gpu_memory",
    "quantization",
    "seed",
)
TRAINING_FIELDS = ("time_limit_hours", "price_limit_per_hour", "trial_minutes", "model_revision")
DEFAULT_REVISION = "main"  # what a hub id resolves to when no revision is pinned

KIND_MESSAGE = "Run must be Full training or Training trial · a small sample."
OBJECTIVE_MESSAGE = objectives.OBJECTIVE_MESSAGE
METHOD_MESSAGE = 'RL trains a LoRA adapter: training.method must be "lora".'
GPU_COUNT_MESSAGE = "RL trains on one GPU: training.gpu_count must be 1."
WINDOW_MESSAGE = (
    "Training window (tokens) must be larger than Longest sampled answer (tokens): each prompt and "
    "the longest sampled answer must fit in it."
)


@dataclass(frozen=True)
class RunDraft:
    """The settings of an RL run as saved; every field has its default filled."""

    name: str = ""
    kind: RunKind = "full"
    objective: str = objectives.RL
    dataset_version: str | None = None
    baseline: str | None = None  # a completed baseline evaluation: a full run's reward defaults to its scoring
    provider: str = "local"
    rounds: int = 20
    prompts_per_round: int = 64
    answers_per_prompt: int = 8
    max_answer_tokens: int = 512
    start_run: str | None = None
    reward: dict[str, Any] | None = None
    learning_rate: float = 0.000005
    training_window: int = 2048
    micro_batch_size: int = 8
    lora_rank: int = 16
    lora_alpha: int = 32
    loss_type: str = "grpo"
    generation_backend: str = "auto"
    vllm_gpu_memory: float = 0.5
    quantization: str = "none"
    seed: int = 0
    time_limit_hours: float = 2.0
    price_limit_per_hour: float | None = None
    trial_minutes: int = 20
    model_revision: str | None = None  # None until saved: saving pins the project's revision, or main
    epochs: int = 3  # SFT and DPO (domain/runs/objectives.py)
    batch_size: int = 8
    beta: float = 0.1
    # The settings the body or form named (a left-out one took its default): Start from locks the adapter's size
    # and scaling to the source run's, and refuses only a value someone gave. Not saved: a saved run holds all.
    given: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def is_trial(self) -> bool:
        return self.kind == "trial"

    @property
    def effective_rounds(self) -> int:
        """A trial runs one round whatever Rounds says (Rounds stays for the full run it prepares)."""
        return 1 if self.is_trial else self.rounds

    @property
    def effective_prompts_per_round(self) -> int:
        return min(self.prompts_per_round, TRIAL_MAX_PROMPTS) if self.is_trial else self.prompts_per_round

    def trial_minutes_allowed(self) -> int:
        """A trial's Minutes, or the Time limit in minutes when that is lower."""
        return min(self.trial_minutes, int(self.time_limit_hours * 60))

    def with_values(self, **changes: Any) -> RunDraft:
        return replace(self, **changes)

    def to_api(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "dataset_version": self.dataset_version,
            "baseline": self.baseline,
            "training": {
                "objective": self.objective,
                "method": "lora",
                "gpu_count": 1,
                "provider": self.provider,
                **{name: getattr(self, name) for name in TRAINING_FIELDS},
                "rl": {name: getattr(self, name) for name in RL_FIELDS},
                "advanced": {name: getattr(self, name) for name in ADVANCED_FIELDS},
                **{
                    objective: {name: getattr(self, name) for name in names}
                    for objective, names in objectives.BLOCK_FIELDS.items()
                    if objective == self.objective
                },
            },
        }

    @classmethod
    def from_saved(cls, data: Mapping[str, Any]) -> RunDraft:
        """Reads back what `to_api` wrote (events hold that dict); no checks, they ran when it was saved."""
        training = data["training"]
        # a run saved before runs had a Model revision has none: see saved_revision
        values: dict[str, Any] = {name: training[name] for name in TRAINING_FIELDS if name in training}
        values.update(training["rl"])
        values.update(training["advanced"])
        values.update(training.get(training.get("objective", objectives.RL)) or {})
        values["objective"] = training.get("objective", objectives.RL)
        return cls(
            name=data["name"],
            kind=data["kind"],
            dataset_version=data["dataset_version"],
            baseline=data.get("baseline"),
            provider=training.get("provider", "local"),
            **values,
        )


def revision_to_pin(chosen: str | None, project_revision: str | None) -> str:
    """The revision a run pins: the one typed, else the project's, else main."""
    return chosen or project_revision or DEFAULT_REVISION


def saved_revision(settings: Mapping[str, Any], project_revision: str | None) -> str:
    """The revision a saved run (its settings, as `to_api` wrote them) trained or will train. A run saved before
    runs had a Model revision pinned its project's, or main."""
    return revision_to_pin(settings["training"].get("model_revision"), project_revision)


def trial_confirmation(draft: RunDraft) -> str:
    """The sentence the launch confirmation of a trial shows; SFT, DPO and Head train an epoch, not a round."""
    if not objectives.is_rl(draft.objective):
        return (
            f"A trial: one epoch on up to {TRIAL_MAX_PROMPTS} training examples and "
            f"{draft.trial_minutes_allowed()} minutes, then the GPU is released."
        )
    return (
        f"A trial: one round on up to {TRIAL_MAX_PROMPTS} prompts and {draft.trial_minutes_allowed()} "
        "minutes, "
        "then the GPU is released."
    )


def launch_confirmation(draft: RunDraft) -> str:
    """What Launch asks before it starts a GPU, in the objective's own words: rounds for RL, epochs and steps
    for SFT, DPO and Head.

    >>> launch_confirmation(RunDraft(rounds=3))
    'A full run: 3 rounds, stopped by its time limit of 2 hours at the latest.'
    >>> launch_confirmation(RunDraft(objective="sft"))
    'A full SFT run: 3 epochs in steps of 8 examples, stopped by its time limit of 2 hours at the latest.'
    """
    if draft.is_trial:
        return trial_confirmation(draft)
    limit = f"stopped by its time limit of {draft.time_limit_hours:g} hours at the latest."
    if objectives.is_rl(draft.objective):
        return f"A full run: {draft.rounds} rounds, {limit}"
    name = objectives.OBJECTIVE_NAMES.get(draft.objective, draft.objective.upper())
    epochs = f"{draft.epochs} epoch{'' if draft.epochs == 1 else 's'}"
    return f"A full {name} run: {epochs} in steps of {draft.batch_size} examples, {limit}"


def prompts_per_round_words(draft: RunDraft) -> str:
    """Prompts per round as the run will use them: a trial trains on at most 8 (000).

    >>> prompts_per_round_words(RunDraft(kind="trial", prompts_per_round=16)), prompts_per_round_words(RunDraft())
    ('8 (a trial uses at most 8)', '64')
    """
    if draft.is_trial and draft.prompts_per_round > TRIAL_MAX_PROMPTS:
        return f"{TRIAL_MAX_PROMPTS} (a trial uses at most {TRIAL_MAX_PROMPTS})"
    return str(draft.effective_prompts_per_round)


# --- parsing ----------------------------------------------------------------------------------------------


def _parse_value(spec: FieldSpec, raw: Any) -> Any:
    """The value in its type, or raises ValueError with the field's bounds message."""
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        if spec.optional:
            return None
        raise ValueError(spec.bounds_message())
    if spec.kind == "choice":
        value = str(raw).strip()
        if value not in {choice for choice, _ in spec.choices}:
            raise ValueError(spec.bounds_message())
        return value
    if spec.kind == "text":
        return str(raw).strip()
    if isinstance(raw, bool):
        raise ValueError(spec.bounds_message())
    try:
        number = float(str(raw).replace(",", "").strip()) if isinstance(raw, str) else float(raw)
    except (TypeError, ValueError):
        raise ValueError(spec.bounds_message()) from None
    if not math.isfinite(number):
        raise ValueError(spec.bounds_message())
    if spec.kind == "int":
        if not number.is_integer():
            raise ValueError(spec.bounds_message())
        number = int(number)
    if spec.name == "price_limit_per_hour":
        if number <= 0:
            raise ValueError(spec.bounds_message())
        return number
    if (spec.minimum is not None and number < spec.minimum) or (
        spec.maximum is not None and number > spec.maximum
    ):
        raise ValueError(spec.bounds_message())
    return number


def _draft_from_values(values: Mapping[str, Any], errors: dict[str, str]) -> RunDraft:
    """Checks every setting in `values` (missing ones take defaults), collecting every message in `errors`."""
    parsed: dict[str, Any] = {}
    if "learning_rate" not in values and values.get("objective") in objectives.LEARNING_RATE_DEFAULTS:
        values = {**values, "learning_rate": objectives.LEARNING_RATE_DEFAULTS[values["objective"]]}
    for spec in ALL_FIELDS:
        if spec.name not in values or spec.name == "reward":
            continue
        try:
            parsed[spec.name] = _parse_value(spec, values[spec.name])
        except ValueError as problem:
            errors[spec.name] = str(problem)
    reward = values.get("reward")
    if reward is not None and not isinstance(reward, dict):
        errors["reward"] = "Reward must be an object with a preset and a metric, or null."
    else:
        parsed["reward"] = reward
    kind = values.get("kind", "full") or "full"
    if kind not in ("full", "trial"):
        errors["kind"] = KIND_MESSAGE
        kind = "full"
    dataset_version = values.get("dataset_version")
    name = str(values.get("name") or "").strip()
    if len(name) > 200:
        errors["name"] = "Name must be at most 200 characters."
    draft = RunDraft(
        name=name,
        kind=kind,
        provider=str(values.get("provider") or "local"),
        dataset_version=str(dataset_version).strip() or None if dataset_version is not None else None,
        baseline=str(values["baseline"]).strip() or None if values.get("baseline") is not None else None,
        **parsed,
        given=frozenset(parsed),
    )
    if (
        objectives.is_rl(draft.objective)
        and "training_window" not in errors
        and "max_answer_tokens" not in errors
        and (draft.max_answer_tokens >= draft.training_window)
    ):
        errors["training_window"] = WINDOW_MESSAGE
    batch_checked = not ({"batch_size", "micro_batch_size"} & errors.keys())
    # A micro batch at least as large as the batch takes the whole batch in one pass (the trainer's micro batch
    # is then the batch), so only a smaller one must divide it: SFT's batch of 8 saves beside RL's micro batch 32.
    if (
        not objectives.is_rl(draft.objective)
        and batch_checked
        and draft.micro_batch_size < draft.batch_size
        and draft.batch_size % draft.micro_batch_size
    ):
        errors["batch_size"] = objectives.BATCH_MESSAGE
    return draft


def run_body_from_api(body: dict[str, Any]) -> RunDraft:
    """The API body (see RunDraft.to_api) to a draft; refuses every bad field at once."""
    if not isinstance(body, dict):
        raise SettingsInvalid({"": "The body must be a JSON object."})
    errors: dict[str, str] = {}
    training = body.get("training") or {}
    if not isinstance(training, dict):
        raise SettingsInvalid({"training": "training must be an object."})
    objective = training.get("objective", objectives.RL)
    if objective not in objectives.BLOCK_FIELDS and objective != objectives.RL:
        errors["objective"] = OBJECTIVE_MESSAGE
        objective = objectives.RL
    if training.get("method", "lora") != "lora":
        errors["method"] = METHOD_MESSAGE
    if training.get("gpu_count", 1) != 1:
        errors["gpu_count"] = GPU_COUNT_MESSAGE
    values: dict[str, Any] = {key: body[key] for key in ("name", "kind", "dataset_version", "baseline") if key in body}
    values["objective"] = objective
    values.update({key: training[key] for key in (*TRAINING_FIELDS, "provider") if key in training})
    for block_name in ("rl", "advanced", *((objective,) if objective in objectives.BLOCK_FIELDS else ())):
        block = training.get(block_name) or {}
        if not isinstance(block, dict):
            errors[block_name] = f"training.{block_name} must be an object."
            continue
        values.update(block)
    if "learning_rate" in training:  # "omitting the learning rate uses 5e-6", wherever a client puts it
        values.setdefault("learning_rate", training["learning_rate"])
    draft = _draft_from_values(values, errors)
    if errors:
        raise SettingsInvalid(errors)
    return draft


def _reward_from_form(form: Mapping[str, str]) -> dict[str, Any] | None:
    """Form fields `reward_<key>` to the reward object; lists one a line or comma-separated, JSON schemas."""
    raw = {key.removeprefix("reward_"): value for key, value in form.items() if key.startswith("reward_")}
    if not str(raw.get("preset", "")).strip():
        return None
    reward: dict[str, Any] = {}
    for key, value in raw.items():
        text = str(value).strip()
        if key in ("labels", "fields"):
            reward[key] = [item.strip() for item in text.replace(",", "\n").splitlines() if item.strip()]
        elif key == "response_schema":
            try:
                reward[key] = json.loads(text) if text else None
            except json.JSONDecodeError:
                reward[key] = text  # the reward's own check refuses it with its words
        elif key in ("absolute_tolerance", "relative_tolerance", "synthetic_prompts"):
            try:
                reward[key] = float(text) if text else None
            except ValueError:
                reward[key] = text
            if key == "synthetic_prompts" and isinstance(reward[key], float) and reward[key].is_integer():
                reward[key] = int(reward[key])
        elif key == "format_bonus":
            reward[key] = text.lower() in ("on", "true", "1", "yes")
        else:
            reward[key] = text or None
    return reward


def run_body_from_form(form: Mapping[str, str]) -> RunDraft:
    """A URL-encoded form (field names as in FIELDS; the reward as reward_<key>) to a draft."""
    values: dict[str, Any] = {key: form[key] for key in form if key in FIELDS_BY_NAME and key != "reward"}
    for key in ("name", "kind", "dataset_version", "baseline", "provider"):
        if key in form:
            values[key] = form[key]
    values["reward"] = _reward_from_form(form)
    errors: dict[str, str] = {}
    draft = _draft_from_values(values, errors)
    if errors:
        raise SettingsInvalid(errors)
    return draft
