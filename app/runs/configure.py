"""What the Configure a run page and its Training Summary sidebar show, from the form as it stands."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from app.datasets.choices import dataset_version_choices
from app.metrics.choices import custom_reward_choices
from app.runs.form import SECTIONS, RunForm, as_text
from app.shell.identity import Identity
from domain.errors import SettingsInvalid
from domain.evaluations.scoring import TAKEN_FROM_BASELINE
from domain.rewards.config import RewardConfig, RewardConfigInvalid
from domain.runs.run import FINISHED_WITH_ADAPTER
from domain.runs.settings import (
    FIELDS_BY_NAME,
    RunDraft,
    revision_to_pin,
    run_body_from_form,
    saved_revision,
    trial_confirmation,
)
from projections.evaluations import completed_baselines
from projections.store import ReadModels

CHECKBOXES = ("reward_format_bonus",)


def form_from_submission(data: Mapping[str, str]) -> dict[str, str]:
    """The submitted form as the domain reads it. A browser leaves an unchecked box out, so say "off"."""
    submitted = {key: value for key, value in data.items()}
    if submitted.get("reward_preset") == "verifiable":
        for name in CHECKBOXES:
            submitted.setdefault(name, "off")
    return submitted


@dataclass(frozen=True)
class TrainingSummary:
    """001's Training Summary sidebar, in our words: what the run will do, and the warnings before saving."""

    rows: list[tuple[str, str]]
    warnings: list[str] = field(default_factory=list)
    launch_note: str = ""


def configure_context(
    read_models: ReadModels,
    identity: Identity,
    *,
    draft: RunDraft | None = None,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    projects = read_models.projects(identity.organization_id)
    if values is None:
        form = RunForm.from_draft(draft or RunDraft(), project=str(projects[0].id) if projects else "")
    else:
        form = RunForm(values=dict(values), errors=dict(errors or {}))
    form = replace(form, custom_metrics=tuple(custom_reward_choices(read_models, identity.organization_id)))
    return {
        "form": form,
        "sections": SECTIONS,
        "projects": projects,
        "start_from": start_from_choices(read_models, identity, form.values),
        "dataset_versions": dataset_version_choices(read_models, identity.organization_id),
        "baselines": baseline_choices(read_models, identity, form.values),
        "taken_from_baseline": TAKEN_FROM_BASELINE,
        "summary": training_summary(form, projects),
        "identity": identity,
        "section": "runs",
    }


def summary_context(
    read_models: ReadModels, identity: Identity, values: Mapping[str, str], *, redraw_reward: bool
) -> dict[str, Any]:
    """The sidebar, and every field's message, for the form as typed so far (nothing is saved)."""
    try:
        run_body_from_form(values)
        errors: dict[str, str] = {}
    except SettingsInvalid as refused:
        errors = refused.errors
    reward_error = _reward_problem(values)
    if reward_error:
        errors.setdefault("reward", reward_error)
    form = RunForm(
        values=dict(values),
        errors=errors,
        custom_metrics=tuple(custom_reward_choices(read_models, identity.organization_id)),
    )
    projects = read_models.projects(identity.organization_id)
    return {
        "form": form,
        "sections": SECTIONS,
        "summary": training_summary(form, projects),
        "redraw_reward": redraw_reward,
        "start_from": start_from_choices(read_models, identity, values),
        "baselines": baseline_choices(read_models, identity, values),
        "taken_from_baseline": TAKEN_FROM_BASELINE,
        "identity": identity,
    }


def baseline_choices(
    read_models: ReadModels, identity: Identity, values: Mapping[str, str]
) -> list[tuple[str, str]]:
    """The Baseline select: the completed baselines of the form's Dataset version (none: Math Pairs held-out)."""
    version = str(values.get("dataset_version") or "").strip() or None
    return completed_baselines(read_models.tables, identity.organization_id, version)


def training_summary(form: RunForm, projects: list[Any]) -> TrainingSummary:
    project = next((p for p in projects if str(p.id) == form.value("project")), projects[0] if projects else None)
    trial = form.is_trial
    rows = [
        ("Method", "RL · GRPO on LoRA"),
        ("Run", "Training trial" if trial else "Full training"),
        ("Model", project.model if project else "—"),
        ("Reward", _reward_label(form) or "—"),
        ("Rounds", "1 (a trial)" if trial else form.value("rounds")),
        ("Prompts per round", form.value("prompts_per_round")),
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
    return TrainingSummary(rows=rows, warnings=_warnings(form), launch_note=_launch_note(form))


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
    try:
        return RewardConfig.from_dict(reward_of_form(form.values)).label
    except (RewardConfigInvalid, SettingsInvalid):
        return ""


def _reward_problem(values: Mapping[str, str]) -> str:
    """The reward's own message, checked as saving would check it (the form parser leaves that to saving)."""
    try:
        RewardConfig.from_dict(reward_of_form(values))
    except RewardConfigInvalid as problem:
        return problem.message
    except SettingsInvalid:
        return ""
    return ""


def reward_of_form(values: Mapping[str, str]) -> dict[str, Any]:
    """The reward the form's reward_<key> fields name ({} for none), unchecked: saving checks it."""
    draft = run_body_from_form({k: v for k, v in values.items() if k.startswith("reward_")})
    return draft.reward or {}


def start_from_choices(
    read_models: ReadModels, identity: Identity, values: Mapping[str, str]
) -> list[tuple[str, str]]:
    """000's Start from list: the finished full runs of the form's project that have an adapter and trained its
    model on the revision this run will pin (the Model revision typed, else the project's, else main)."""
    projects = read_models.projects(identity.organization_id)
    project = next((p for p in projects if str(p.id) == values.get("project")), projects[0] if projects else None)
    if project is None:
        return []
    wanted = revision_to_pin(str(values.get("model_revision") or "").strip() or None, project.revision)
    choices = []
    for run in read_models.runs(identity.organization_id, project.id):
        if run.state not in FINISHED_WITH_ADAPTER or run.kind != "full":
            continue
        detail = read_models.run(identity.organization_id, run.id)  # the model and the revision it trained
        if (
            detail is not None
            and detail.adapter is not None
            and detail.model == project.model
            and saved_revision(detail.settings, project.revision) == wanted
        ):
            choices.append((str(run.id), run.name or str(run.id)[:8]))
    return choices


__all__ = [
    "as_text",
    "baseline_choices",
    "configure_context",
    "form_from_submission",
    "reward_of_form",
    "start_from_choices",
    "summary_context",
]
