"""A run's settings, one typed value: every setting declared once, with its default, label, bounds and hint.

`RunSettings` is what the parsers of the API body and the form make (domain/runs/settings.py), what saving checks
(domain/runs/draft_checks.py), what the Run aggregate's Saved and Edited events carry (stored as the API body,
domain/runs/stored_settings.py), what the read models give the console and what the jobs build the trainer's
spec from (jobs/specs.py). The form's fields (`ALL_FIELDS`), the API body's shape (`to_api`, `from_saved`) and
the parsers' messages are derived from the declarations below; the trial's rule (`effective_*`) is computed here
once, and the trainer receives its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from domain.runs import objectives
from domain.runs.fields import FieldSpec, setting, specs_of
from domain.runs.objectives import DPO, HEAD, RL, SFT

RunKind = Literal["full", "trial"]

TRIAL_MAX_PROMPTS = 8  # a trial trains on at most 8 training prompts (or examples) and scores at most 8 validation
VALIDATION_SAMPLE = 128  # a run's fixed validation sample: up to 128 validation prompts (or examples)
DEFAULT_REVISION = "main"  # what a hub id resolves to when no revision is pinned

_RL_ONLY = (RL,)
_TUNING = (SFT, DPO, HEAD)


@dataclass(frozen=True)
class RunSettings:
    """The settings of a run (RL, SFT, DPO or Head) as saved; every field has its default filled."""

    # --- beside `training` in the API body; the Configure page draws these itself -----------------------------
    name: str = setting("", "Name", "text", maximum=200, block="body")
    kind: RunKind = setting(
        "full", "Run", "choice", choices=(("full", "Full training"), ("trial", "Training trial · a small sample")),
        block="body",
    )
    dataset_version: str | None = setting(None, "Dataset version", "text", optional=True, block="body")
    # a completed baseline evaluation: a full run's reward defaults to its scoring
    baseline: str | None = setting(None, "Baseline", "text", optional=True, block="body", objectives=_RL_ONLY)
    # --- Run ------------------------------------------------------------------------------------------------
    objective: str = setting(
        RL, "Training objective", "choice", choices=objectives.OBJECTIVE_CHOICES, section="Run", block="training",
        hint="SFT first when the model rarely gets an answer right, then RL from that adapter.",
    )
    time_limit_hours: float = setting(
        2.0, "Time limit (hours)", "float", 0.1, 168, section="Run", block="training",
        hint="Training stops about 3 minutes before the limit, to save the adapter.",
    )
    price_limit_per_hour: float | None = setting(
        None, "Price limit ($/hour)", "float", 0, None, section="Run", block="training", optional=True,
        above_minimum=True, hint="Empty for no limit.",
    )
    trial_minutes: int = setting(
        20, "Minutes", "int", 5, 60, section="Run", block="training",
        hint="A trial's own limit (one round, or for SFT, DPO and Head one epoch, on up to 8 examples), then the "
        "GPU is released.",
    )
    # None until saved: saving pins the project's revision, or main
    model_revision: str | None = setting(
        None, "Model revision", "text", section="Run", block="training", optional=True,
        hint="A commit, tag or branch of the model; empty pins the project's revision, or main.",
    )
    # --- Reinforcement learning (Start from serves every objective) ------------------------------------------
    start_run: str | None = setting(
        None, "Start from", "text", section="Reinforcement learning", block="rl", optional=True,
        hint="A finished full run of this project with an adapter. Its adapter size and scaling apply.",
    )
    rounds: int = setting(20, "Rounds", "int", 1, 1000, section="Reinforcement learning", block="rl",
                          objectives=_RL_ONLY)
    prompts_per_round: int = setting(64, "Prompts per round", "int", 1, 1024, section="Reinforcement learning",
                                     block="rl", objectives=_RL_ONLY)
    answers_per_prompt: int = setting(8, "Answers per prompt", "int", 2, 64, section="Reinforcement learning",
                                      block="rl", objectives=_RL_ONLY)
    max_answer_tokens: int = setting(
        512, "Longest sampled answer (tokens)", "int", 16, 16384, section="Reinforcement learning", block="rl",
        objectives=_RL_ONLY, hint="An answer cut off at this length scores 0.",
    )
    # the canonical reward object (domain/rewards/config.py) once saved
    reward: dict[str, Any] | None = setting(
        None, "Reward", "text", section="Reward", block="rl", optional=True, objectives=_RL_ONLY,
        hint="The metric that scores each sampled answer from 0 to 1.",
    )
    # --- Advanced settings ----------------------------------------------------------------------------------
    learning_rate: float = setting(0.000005, "Learning rate", "float", 1e-7, 1e-3, section="Advanced settings")
    training_window: int = setting(
        2048, "Training window (tokens)", "int", 128, 131072, section="Advanced settings",
        hint="Each example must fit: for RL, each prompt and the longest sampled answer.",
    )
    micro_batch_size: int = setting(
        8, "Micro batch size", "int", 1, 64, section="Advanced settings",
        hint="Answers (RL) or examples (SFT, DPO, Head) per forward/backward pass.",
    )
    lora_rank: int = setting(16, "Adapter size (LoRA rank)", "int", 4, 128, section="Advanced settings")
    lora_alpha: int = setting(32, "Adapter scaling (LoRA alpha)", "int", 4, 256, section="Advanced settings")
    loss_type: str = setting(
        "grpo", "Loss type", "choice", choices=(("grpo", "GRPO"), ("dapo", "DAPO"), ("dr_grpo", "Dr. GRPO")),
        section="Advanced settings", objectives=_RL_ONLY,
    )
    generation_backend: str = setting(
        "auto", "Generation backend", "choice", section="Advanced settings", objectives=_RL_ONLY,
        choices=(
            ("auto", "vLLM (colocate) with a GPU, Transformers otherwise"),
            ("vllm", "vLLM (colocate)"),
            ("transformers", "Transformers"),
        ),
    )
    vllm_gpu_memory: float = setting(0.5, "GPU memory for vLLM", "float", 0.1, 0.95, section="Advanced settings",
                                     objectives=_RL_ONLY)
    quantization: str = setting(
        "none", "Quantization", "choice", section="Advanced settings",
        choices=(("none", "None"), ("8bit", "8-bit"), ("4bit", "4-bit (GPU only)")),
    )
    seed: int = setting(0, "Seed", "int", 0, 2_147_483_647, section="Advanced settings")
    # --- RL's passes over a round's answers (TRL's num_iterations), the clipped ratio, the gradient's norm -----
    # Held in training.rl as "epochs" (the API's name); the field has its own name beside SFT's Epochs.
    rl_epochs: int = setting(
        1, "Epochs", "int", 1, 4, section="Advanced settings", block="rl", objectives=_RL_ONLY, key="epochs",
        hint="Passes over each round's answers, one optimizer step each: the passes after the first learn more from "
        "the same sampling, with the policy ratio clipped.",
    )
    clip_low: float = setting(
        0.2, "Clip range low (ε low)", "float", 0.01, 0.9, section="Advanced settings", objectives=_RL_ONLY,
        hint="A pass after the first stops pushing an answer's token down once its ratio is below 1 - ε low.",
    )
    clip_high: float = setting(
        0.2, "Clip range high (ε high)", "float", 0.01, 1.0, section="Advanced settings", objectives=_RL_ONLY,
        hint="A pass after the first stops pushing an answer's token up once its ratio is above 1 + ε high "
        "(DAPO's clip-higher: 0.28).",
    )
    max_grad_norm: float | None = setting(
        1.0, "Max gradient norm", "float", 0, None, section="Advanced settings", objectives=_RL_ONLY, optional=True,
        above_minimum=True, hint="Each step's gradient is scaled down to this norm when above it (as TRL); empty "
        "for no clipping.",
    )
    # --- SFT, DPO and Head (domain/runs/objectives.py) -------------------------------------------------------
    epochs: int = setting(3, "Epochs", "int", 1, 100, section="SFT and DPO", block="objective", objectives=_TUNING,
                          hint="Passes over the training examples (SFT, DPO and Head).")
    batch_size: int = setting(
        8, "Batch size", "int", 1, 1024, section="SFT and DPO", block="objective", objectives=_TUNING,
        hint="Examples per optimizer step (SFT, DPO and Head); a multiple of Micro batch size.",
    )
    beta: float = setting(0.1, "DPO beta", "float", 0.01, 10, section="SFT and DPO", block="objective",
                          objectives=(DPO,), hint="How strongly DPO keeps to the model it starts from.")
    # --- where it trains (the Configure page draws it itself) -----------------------------------------------
    provider: str = setting("local", "Training provider", "text", block="training")
    # The settings the body or form named (a left-out one took its default): Start from locks the adapter's size
    # and scaling to the source run's, and refuses only a value someone gave. Not saved: a saved run holds all.
    given: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    # --- the trial's rule: a trial runs one round (one epoch) on at most 8 prompts (examples) -----------------
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

    @property
    def effective_validation_prompts(self) -> int:
        """The validation sample: up to 128 validation prompts (or examples), a trial's up to 8."""
        return TRIAL_MAX_PROMPTS if self.is_trial else VALIDATION_SAMPLE

    @property
    def effective_epochs(self) -> int:
        return 1 if self.is_trial else self.epochs

    @property
    def effective_training_examples(self) -> int | None:
        """How many training examples SFT, DPO and Head train on: a trial's first 8; None, all of them."""
        return TRIAL_MAX_PROMPTS if self.is_trial else None

    @property
    def time_limit_seconds(self) -> float:
        """The run's limit from its launch: the Time limit; a trial's Minutes, or the Time limit when that is lower."""
        seconds = self.time_limit_hours * 3600
        return min(seconds, self.trial_minutes * 60.0) if self.is_trial else seconds

    def trial_minutes_allowed(self) -> int:
        """A trial's Minutes, or the Time limit in minutes when that is lower."""
        return min(self.trial_minutes, int(self.time_limit_hours * 60))

    def with_values(self, **changes: Any) -> RunSettings:
        return replace(self, **changes)

    # --- the API body: the shape the documents give, which the events store ---------------------------------
    def saves(self, name: str) -> bool:
        """Whether the saved body holds a setting: every one but the blocks of the other objectives."""
        spec = FIELDS_BY_NAME[name]
        return spec.block != "objective" or spec.used_by(self.objective)

    def to_api(self) -> dict[str, Any]:
        def block(name: str) -> dict[str, Any]:
            return {FIELDS_BY_NAME[key].api_key: getattr(self, key) for key in BLOCKS[name]}

        training = {"objective": self.objective, "method": "lora", "gpu_count": 1, "provider": self.provider}
        training.update({key: value for key, value in block("training").items() if key != "objective"})
        training.update({"rl": block("rl"), "advanced": block("advanced")})
        if self.objective in OBJECTIVE_BLOCKS:
            training[self.objective] = {name: getattr(self, name) for name in OBJECTIVE_BLOCKS[self.objective]}
        return {**block("body"), "training": training}

    @classmethod
    def from_saved(cls, data: Mapping[str, Any]) -> RunSettings:
        """Reads back what `to_api` wrote; no checks, they ran when it was saved. A run saved before a setting
        existed takes its default (before Model revision, None: see saved_revision)."""
        training = data["training"]
        objective = training.get("objective", RL)
        values = {name: data[name] for name in BLOCKS["body"] if name in data}
        values.update({name: training[name] for name in BLOCKS["training"] if name in training})
        values.update(field_names("rl", training["rl"]))
        values.update(field_names("advanced", training["advanced"]))
        if "max_grad_norm" not in training["advanced"]:
            values["max_grad_norm"] = None  # saved before the setting existed: it trained, and goes on, unclipped
        if objective in OBJECTIVE_BLOCKS:  # RL's own block is training.rl, read above
            values.update(training.get(objective) or {})
        return cls(**{**values, "objective": objective})

    def saved(self) -> RunSettings:
        """The settings as saving keeps them, and as a run rebuilt from its events holds them: what the body does
        not hold (another objective's block, the names given) takes its default."""
        return type(self).from_saved(self.to_api())


SPECS: list[FieldSpec] = specs_of(RunSettings)
FIELDS_BY_NAME: dict[str, FieldSpec] = {spec.name: spec for spec in SPECS}
# The Configure form's fields, in its order: the Training objective, Run, Reinforcement learning, Reward, Advanced
# settings, and SFT and DPO's (Name, Run, Dataset version, Baseline and Training provider the page draws itself).
ALL_FIELDS: list[FieldSpec] = [spec for spec in SPECS if spec.section is not None]
# The settings of the training block every run saves, beside the Training objective (the RL form of 000).
FIELDS: list[FieldSpec] = [
    spec for spec in ALL_FIELDS if spec.block in ("training", "rl", "advanced") and spec.name != "objective"
]
# The settings each block of the API body holds ("body" for those beside `training`).
BLOCKS: dict[str, tuple[str, ...]] = {
    block: tuple(spec.name for spec in SPECS if spec.block == block) for block in ("body", "training", "rl", "advanced")
}
# The numbers of an RL run's rounds: Rounds, Prompts per round, Answers per prompt, Longest sampled answer (what
# 000's start_training takes beside Start from).
ROUND_SETTINGS: tuple[str, ...] = tuple(
    spec.name for spec in SPECS
    if spec.block == "rl" and spec.kind == "int" and spec.section == "Reinforcement learning"
)
# The settings only SFT, DPO and Head have, in the block of their objective: training.sft, training.dpo ...
OBJECTIVE_BLOCKS: dict[str, tuple[str, ...]] = {
    objective: tuple(spec.name for spec in SPECS if spec.block == "objective" and spec.used_by(objective))
    for objective in (SFT, DPO, HEAD)
}


def field_names(block: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """A block of the API body with each key as RunSettings names it (training.rl's "epochs" is `rl_epochs`);
    a key the block does not hold passes unchanged, for the parser to refuse or pass over."""
    renamed = {FIELDS_BY_NAME[name].api_key: name for name in BLOCKS.get(block, ())}
    return {renamed.get(key, key): value for key, value in values.items()}


def learning_rate_for(objective: str) -> float:
    """The Learning rate a run of `objective` takes when none is given: SFT's, DPO's and Head's own, else RL's."""
    return float(objectives.LEARNING_RATE_DEFAULTS.get(objective, FIELDS_BY_NAME["learning_rate"].default))


def revision_to_pin(chosen: str | None, project_revision: str | None) -> str:
    """The revision a run pins: the one typed, else the project's, else main."""
    return chosen or project_revision or DEFAULT_REVISION


def saved_revision(settings: RunSettings, project_revision: str | None) -> str:
    """The revision a saved run trained or will train. A run saved before runs had a Model revision pinned its
    project's, or main."""
    return revision_to_pin(settings.model_revision, project_revision)
