"""What the Configure a run page and its Training Summary sidebar show, from the form as it stands."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from uuid import UUID

from litestar.response import Template

from app.datasets.choices import dataset_version_choices
from app.metrics.choices import custom_reward_choices
from app.runs.defaults import starting_draft
from app.runs.form import SECTIONS, RunForm, as_text, reward_values
from app.runs.summary import reward_of_form, reward_problem, training_summary
from app.shell.identity import Identity
from domain.errors import SettingsInvalid
from domain.evaluations.commands import NO_SUCH_BASELINE
from domain.evaluations.scoring import TAKEN_FROM_BASELINE, reward_from_baseline
from domain.rewards.config import CUSTOM_PREFIX, METRICS
from domain.runs import objectives
from domain.runs.drafts import ADAPTER_SHAPE
from domain.runs.reward import (
    CHOOSE_REWARD,
    NO_BASELINE,
    reward_label,
)
from domain.runs.run_settings import RunSettings, learning_rate_for, revision_to_pin, saved_revision
from domain.runs.settings import run_body_from_form
from domain.runs.states import FINISHED_WITH_ADAPTER
from projections.evaluations import completed_baselines, evaluation
from projections.store import ReadModels

CHECKBOXES = ("reward_format_bonus",)
# Fields whose value follows another field's, redrawn when it changes: Start from locks the adapter's size and
# scaling to the source run's (000), and each Training objective has its own learning rate.
REDRAWN_WITH = {"start_run": ADAPTER_SHAPE, "objective": ("learning_rate",)}
ADAPTER_LOCKED_HINT = "Taken from “{run}”, which this run continues: its adapter's size and scaling apply."


def form_from_submission(data: Mapping[str, str]) -> dict[str, str]:
    """The submitted form as the domain reads it. A browser leaves an unchecked box out, so say "off"."""
    submitted = {key: value for key, value in data.items()}
    if submitted.get("reward_preset") == "verifiable":
        for name in CHECKBOXES:
            submitted.setdefault(name, "off")
    return submitted


def configure_again(
    read_models: ReadModels,
    identity: Identity,
    submitted: Mapping[str, str],
    errors: Mapping[str, str],
    status_code: int,
    editing: Any = None,
) -> Template:
    """The Configure form again as the person typed it, with why it was not saved: the role's words under "" (403)
    or each field's (422). `editing` as for `configure_context`."""
    context = configure_context(read_models, identity, values=submitted, errors=errors, editing=editing)
    return Template("runs/configure.html", context=context, status_code=status_code)


def configure_context(
    read_models: ReadModels,
    identity: Identity,
    *,
    draft: RunSettings | None = None,
    values: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
    editing: Any = None,
) -> dict[str, Any]:
    """`editing`: the draft's RunDetail when the form edits it (Edit on a draft's page saves into the same run)."""
    projects = read_models.projects(identity.organization_id)
    if values is None:
        project = str(editing.project_id) if editing is not None else str(projects[0].id) if projects else ""
        form = RunForm.from_draft(draft or RunSettings(), project=project)
    else:
        form = RunForm(values=dict(values), errors=dict(errors or {}))
    form = with_what_the_form_knows(form, read_models, identity)
    return {
        "form": form,
        "editing": editing,
        "form_action": f"/runs/{editing.id}/edit" if editing is not None else "",
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
    read_models: ReadModels,
    identity: Identity,
    values: Mapping[str, str],
    *,
    redraw_reward: bool,
    trigger: str = "",
) -> dict[str, Any]:
    """The sidebar, and every field's message, for the form as typed so far (nothing is saved). `trigger`: the
    field that changed. Choosing a Baseline starts the reward as that baseline's (000), and choosing Start from
    locks the adapter's size and scaling to the source run's, so those redraw their parts."""
    values = dict(values)
    if trigger == "baseline" and values.get("baseline"):
        values["reward_preset"] = ""  # "Taken from the baseline"; changing a field trains toward another reward
    if trigger == "reward_preset":
        values.update(_reward_of_kind(read_models, identity, values))
    if trigger == "objective":  # 000: choosing RL, "Learning rate changes to 0.000005"; each objective its own
        values["learning_rate"] = as_text(_learning_rate_of(read_models, identity, values.get("objective") or ""))
    try:
        run_body_from_form(values)
        errors: dict[str, str] = {}
    except SettingsInvalid as refused:
        errors = refused.errors
    form = with_what_the_form_knows(RunForm(values=values, errors=errors), read_models, identity)
    if (reward_error := reward_problem(form)) and "reward" not in errors:
        form = replace(form, errors={**errors, "reward": reward_error})
    projects = read_models.projects(identity.organization_id)
    return {
        "form": form,
        "sections": SECTIONS,
        "summary": training_summary(form, projects),
        "redraw_reward": redraw_reward,
        # the fields whose value follows another's, redrawn with it (`trigger` changed them above)
        "redraw_fields": REDRAWN_WITH.get(trigger, ()),
        "start_from": start_from_choices(read_models, identity, values),
        "baselines": baseline_choices(read_models, identity, values),
        "taken_from_baseline": TAKEN_FROM_BASELINE,
        "identity": identity,
    }


def with_what_the_form_knows(form: RunForm, read_models: ReadModels, identity: Identity) -> RunForm:
    """The form with what the read models add: custom metrics to choose (and their names), the reward the chosen
    baseline gives, and, under Start from, the source run's adapter size and scaling, locked (000)."""
    org_id = identity.organization_id
    values = dict(form.values)
    reward, reward_error = baseline_reward_of(read_models, identity, values)
    locked: dict[str, str] = {}
    source = _start_from_run(read_models, identity, values.get("start_run"))
    if source is not None:
        hint = ADAPTER_LOCKED_HINT.format(run=source.name or "Untitled run")
        for name in ADAPTER_SHAPE:
            values[name], locked[name] = as_text(getattr(source.run_settings, name)), hint
    labels = {
        str(version.id): version.label
        for version in read_models.custom_metric_versions(org_id)  # type: ignore[attr-defined]
    }
    return replace(
        form,
        values=values,
        custom_metrics=tuple(custom_reward_choices(read_models, org_id)),
        custom_metric_labels=labels,
        baseline_reward=reward_label(reward, labels.get(str(reward.get("custom_metric")))) if reward else "",
        baseline_reward_settings=reward,
        baseline_reward_error=reward_error,
        locked=locked,
    )


def _start_from_run(read_models: ReadModels, identity: Identity, start_run: str | None) -> Any:
    if not start_run:
        return None
    try:
        return read_models.run(identity.organization_id, UUID(str(start_run)))
    except ValueError:
        return None


def baseline_reward_of(
    read_models: ReadModels, identity: Identity, values: Mapping[str, str]
) -> tuple[dict[str, Any] | None, str]:
    """The reward the form's Baseline gives (000: "the reward starts as that baseline's scoring and main
    metric"), or None and why not: its main metric can't be a reward, or no baseline is chosen."""
    chosen = str(values.get("baseline") or "").strip()
    if not chosen:
        return None, CHOOSE_REWARD if values.get("kind") == "trial" else NO_BASELINE
    try:
        row = evaluation(read_models.tables, identity.organization_id, UUID(chosen))  # type: ignore[attr-defined]
    except ValueError:
        row = None
    if row is None:
        return None, NO_SUCH_BASELINE
    try:
        return reward_from_baseline(json.loads(row["scoring_json"]), row["main_metric"]), ""
    except SettingsInvalid as problem:
        return None, problem.errors.get("reward", "")


def _learning_rate_of(read_models: ReadModels, identity: Identity, objective: str) -> float:
    """The objective's learning rate: the project's own for RL where it set one (the Demo's tiny model learns at
    5e-4), else the objective's default (RL 5e-6, SFT 2e-4, ...)."""
    if objectives.is_rl(objective):
        return starting_draft(read_models.projects(identity.organization_id)).learning_rate
    return learning_rate_for(objective)


def _reward_of_kind(read_models: ReadModels, identity: Identity, values: Mapping[str, str]) -> dict[str, str]:
    """A new kind of answers starts from the baseline's reward when it is of that kind, else from the kind's first
    metric, so the Training Summary names a reward at once (a metric of another kind names none)."""
    preset = values.get("reward_preset") or ""
    if preset not in METRICS:
        return {}
    reward, _ = baseline_reward_of(read_models, identity, values)
    if reward is not None and reward["preset"] == preset:
        return {key: value for key, value in reward_values(reward).items() if key != "reward_preset"}
    metric = values.get("reward_metric") or ""
    if metric in METRICS[preset] or metric.startswith(CUSTOM_PREFIX):
        return {}
    return {"reward_metric": next(iter(METRICS[preset]))}


def baseline_choices(
    read_models: ReadModels, identity: Identity, values: Mapping[str, str]
) -> list[tuple[str, str]]:
    """The Baseline select: the completed baselines of the form's Dataset version (none: Math Pairs held-out)."""
    version = str(values.get("dataset_version") or "").strip() or None
    return completed_baselines(read_models.tables, identity.organization_id, version)


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
            and saved_revision(detail.run_settings, project.revision) == wanted
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
