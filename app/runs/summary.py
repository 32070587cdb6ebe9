"""The Configure form's Training Summary sidebar (001): what the run will do, in our words, with the warnings
before saving and the launch note of a trial; and the reward as the form names it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.runs.form import RunForm
from domain.errors import SettingsInvalid
from domain.rewards.config import RewardConfig, RewardConfigInvalid
from domain.runs import objectives
from domain.runs.launch_words import prompts_per_round_words, trial_confirmation
from domain.runs.reward import MAKES_OWN_PROMPTS, makes_own_prompts, reward_label, training_prompts
from domain.runs.run_settings import FIELDS_BY_NAME, RunSettings
from domain.runs.settings import run_body_from_form


@dataclass(frozen=True)
class TrainingSummary:
    """001's Training Summary sidebar, in our words: what the run will do, and the warnings before saving."""

    rows: list[tuple[str, str]]
    warnings: list[str] = field(default_factory=list)
    launch_note: str = ""
    about: str = ""  # what the method does, where the rows alone would not say it


TUNING_METHODS = {
    objectives.SFT: "SFT · supervised fine-tuning on LoRA",
    objectives.DPO: "DPO · preference pairs on LoRA",
    objectives.HEAD: "Head · LoRA on the output head",
}
HEAD_ABOUT = (
    "Trains the output head only: the rest of the model stays frozen. Fast and cheap; learns the answer's format "
    "and vocabulary, not new reasoning."
)


def training_summary(form: RunForm, projects: list[Any]) -> TrainingSummary:
    project = next((p for p in projects if str(p.id) == form.value("project")), projects[0] if projects else None)
    if form.value("objective") in (objectives.SFT, objectives.DPO, objectives.HEAD):
        return tuning_summary(form, project)
    trial = form.is_trial
    reward = form.baseline_reward_settings if not form.preset else reward_of_form(form.values) or None
    rows = [
        ("Method", "RL · GRPO on LoRA"),
        ("Run", "Training trial" if trial else "Full training"),
        ("Model", project.model if project else "—"),
        ("Reward", _reward_label(form) or "—"),
        ("Training prompts", training_prompts(reward, form.value("dataset_version") or None)),
        ("Rounds", "1 (a trial)" if trial else form.value("rounds")),
        ("Prompts per round", _prompts_per_round(form)),
        ("Answers per prompt", form.value("answers_per_prompt")),
        ("Longest answer", f"{form.value('max_answer_tokens')} tokens"),
        ("GPUs", f"1 · {form.value('provider') or 'local'}"),
        ("LoRA rank", form.value("lora_rank")),
        ("Learning rate", form.value("learning_rate")),
        (
            "Backend",
            dict(FIELDS_BY_NAME["generation_backend"].choices).get(form.value("generation_backend"), "—"),
        ),
        ("Time limit", f"{form.value('time_limit_hours')} h"),
    ]
    if form.value("rl_epochs") not in ("", "1"):  # several passes: each round's update takes that many steps
        rows.insert(9, ("Epochs", f"{form.value('rl_epochs')} passes over each round's answers"))
    warnings = _warnings(form)
    if makes_own_prompts(reward) and form.value("dataset_version"):
        warnings.append(MAKES_OWN_PROMPTS)
    return TrainingSummary(rows=rows, warnings=warnings, launch_note=_launch_note(form))


def tuning_summary(form: RunForm, project: Any) -> TrainingSummary:
    """An SFT, DPO or Head run: epochs in steps of Batch size examples, on the Dataset version's examples (DPO's
    pairs); Head trains a LoRA on the output head alone."""
    objective = form.value("objective")
    dpo = objective == objectives.DPO
    data = "the Dataset version's preference pairs" if dpo else "the Dataset version's conversations"
    rows = [
        ("Method", TUNING_METHODS[objective]),
        ("Run", "Training trial" if form.is_trial else "Full training"),
        ("Model", project.model if project else "—"),
        ("Data", data if form.value("dataset_version") else "— (choose a Dataset version)"),
        ("Epochs", "1 (a trial)" if form.is_trial else form.value("epochs")),
        ("Batch size", f"{form.value('batch_size')} examples a step"),
        *((("DPO beta", form.value("beta")),) if dpo else ()),
        ("GPUs", f"1 · {form.value('provider') or 'local'}"),
        ("LoRA rank", form.value("lora_rank")),
        ("Learning rate", form.value("learning_rate")),
        ("Time limit", f"{form.value('time_limit_hours')} h"),
    ]
    about = HEAD_ABOUT if objective == objectives.HEAD else ""
    return TrainingSummary(rows=rows, launch_note=_launch_note(form), about=about)


def _prompts_per_round(form: RunForm) -> str:
    """What the run will use: a trial trains on at most 8 prompts, whatever Prompts per round says (000)."""
    try:
        prompts = int(form.value("prompts_per_round"))
    except ValueError:
        return form.value("prompts_per_round")
    return prompts_per_round_words(RunSettings(kind="trial" if form.is_trial else "full", prompts_per_round=prompts))


def _warnings(form: RunForm) -> list[str]:
    """001 warns when the batch does not hold whole groups of answers; ours is the micro batch (answers)."""
    try:
        micro, group = int(form.value("micro_batch_size")), int(form.value("answers_per_prompt"))
    except ValueError:
        return []
    if micro > 0 and group > 0 and micro % group and group % micro:
        return [
            f"Micro batch size ({micro}) should be a multiple of Answers per prompt ({group}), or divide it, "
            "so each micro batch holds whole groups of answers."
        ]
    return []


def _launch_note(form: RunForm) -> str:
    if not form.is_trial:
        return ""
    try:
        draft = run_body_from_form(form.values)
    except SettingsInvalid:
        return ""
    return trial_confirmation(draft)


def _reward_label(form: RunForm) -> str:
    """The reward as the run page will word it (domain.runs.reward.reward_label): the baseline's when Answers are
    "Taken from the baseline", a custom metric by its name and version."""
    if not form.preset:
        return form.baseline_reward
    try:
        reward = RewardConfig.from_dict(reward_of_form(form.values)).to_dict()
    except (RewardConfigInvalid, SettingsInvalid):
        return ""
    return reward_label(reward, form.custom_metric_labels.get(str(reward.get("custom_metric"))))


def reward_problem(form: RunForm) -> str:
    """The reward's own message, checked as saving would check it (the form parser leaves that to saving)."""
    if not form.preset:
        return form.baseline_reward_error
    try:
        RewardConfig.from_dict(reward_of_form(form.values))
    except RewardConfigInvalid as problem:
        return problem.message
    except SettingsInvalid:
        return ""
    return ""


def reward_of_form(values: Mapping[str, str]) -> dict[str, Any]:
    """The reward the form's reward_<key> fields name ({} for none), unchecked: saving checks it."""
    draft = run_body_from_form({k: v for k, v in values.items() if k.startswith("reward_")})
    return draft.reward or {}


