"""The console's New experiment form (000's "In an experiment"): Setup (name, project, Training objective, the
baseline to reuse or the evaluation settings to measure the base model with) and Compute (the reward line with
Choose another reward / Use the evaluation's main metric, then Advanced settings, Start from first). Every change
redraws the Compute step; nothing is created until Start experiment."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Response, Template

from app.evaluations.forms import MATH_PAIRS_SOURCE, metric_choices, source_of_form, test_example_choices
from app.experiments.compute import (
    ANOTHER_REWARD,
    FIRST_ADVANCED,
    MAIN_METRIC,
    REUSE_AN_ADAPTER,
    TRAIN_WITH_RL,
    compute_step,
    with_compute_action,
)
from app.metrics.choices import custom_reward_choices
from app.runs.configure import form_from_submission, reward_of_form, start_from_choices
from app.runs.defaults import starting_draft
from app.runs.form import RunForm
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.roles import LAUNCH
from domain.application import Verity
from domain.errors import NotAllowed, SettingsInvalid
from domain.evaluations.answer_length import MAX_ANSWER_TOKENS_DEFAULT
from projections.evaluations import completed_baselines

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
CHOOSE_THE_ADAPTER = "Choose the finished run whose adapter the experiment reuses."
OBJECTIVES = ((TRAIN_WITH_RL, "RL · reinforcement learning (GRPO)"),
              (REUSE_AN_ADAPTER, "Reuse an adapter · trains nothing"))


def _starting_values(read_models: Any, identity: Identity) -> dict[str, str]:
    projects = read_models.projects(identity.organization_id)
    project = str(projects[0].id) if projects else ""
    # The RL settings and Advanced settings start from the project's own numbers, as Configure a run does.
    run_values = RunForm.from_draft(starting_draft(projects), project=project).values
    kept = {name: run_values[name] for name in (*FIRST_ADVANCED, *_advanced_names()) if name in run_values}
    return {
        **kept, "project": project, "name": "RL experiment", "objective": TRAIN_WITH_RL, "baseline": "",
        "source": MATH_PAIRS_SOURCE, "count": "64", "metric": "verifiable:math_pairs",
        "evaluation_max_answer_tokens": kept.get("max_answer_tokens") or str(MAX_ANSWER_TOKENS_DEFAULT),
        "chosen_reward": MAIN_METRIC, "reused_run": "",
    }


@functools.cache
def _advanced_names() -> tuple[str, ...]:
    return tuple(f.name for f in RunForm(values={}).section("Advanced settings"))


@functools.cache
def _quiet_fields() -> frozenset[str]:
    """Fields whose change leaves the Compute step as it is (htmx names the changed one: see console.js)."""
    return frozenset({"name", "source", "count", "evaluation_max_answer_tokens", *FIRST_ADVANCED, *_advanced_names()})


def _context(read_models: Any, identity: Identity, values: Mapping[str, str],
             errors: Mapping[str, str]) -> dict[str, Any]:
    org_id = identity.organization_id
    step = compute_step(values, errors, read_models, org_id, tuple(custom_reward_choices(read_models, org_id)))
    objectives = [(value, label + (" (Pro)" if value == TRAIN_WITH_RL and not identity.has_rl else ""))
                  for value, label in OBJECTIVES]
    return {
        "section": "experiments", "identity": identity, "values": values, "errors": errors, "step": step,
        "objectives": objectives, "projects": read_models.projects(org_id),
        "sources": test_example_choices(read_models, org_id), "metrics": metric_choices(),
        "baselines": completed_baselines(read_models.tables, org_id, every_source=True),
        "adapters": start_from_choices(read_models, identity, values),
    }


def _page(read_models: Any, identity: Identity, values: Mapping[str, str], errors: Mapping[str, str],
          status_code: int = 200) -> Template:
    return Template("experiments/new.html", context=_context(read_models, identity, values, errors),
                    status_code=status_code)


def _uuid(text: str | None) -> UUID | None:
    try:
        return UUID((text or "").strip()) if (text or "").strip() else None
    except ValueError:
        return None


def _whole(text: str) -> Any:
    text = (text or "").strip()
    return int(text) if text.isdigit() else text  # anything else is refused by the domain in words


class NewExperimentPageController(Controller):
    path = "/experiments/new"
    include_in_schema = False

    @get("/", name="experiments:new", sync_to_thread=True)
    def form(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _page(read_models, identity, _starting_values(read_models, identity), {})

    @post("/compute", name="experiments:compute", sync_to_thread=True)
    def compute(self, request: Request, data: Annotated[dict[str, str], FORM], read_models: ReadModelsDep,
                identity: Identity) -> Template | Response:
        """The Compute step for the form as typed (htmx swaps it in), or the whole page without htmx."""
        if request.headers.get("hx-request") and request.headers.get("hx-trigger-name") in _quiet_fields():
            # Nothing on the step depends on this field; redrawing would only wipe what is being typed below.
            return Response(content=b"", status_code=204)
        values = with_compute_action(form_from_submission(data))
        context = _context(read_models, identity, values, {})
        values = {**values, "chosen_reward": context["step"].reward_choice}
        context["values"] = values
        template = "experiments/compute.html" if request.headers.get("hx-request") else "experiments/new.html"
        return Template(template, context=context)

    @post("/", name="experiments:create", sync_to_thread=True)
    def create(self, data: Annotated[dict[str, str], FORM], verity: Verity,
               read_models: ReadModelsDep, own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        values = form_from_submission(data)
        if (refused_role := identity.refusal(LAUNCH)) is not None:  # the form again, as typed, with why not
            return _page(read_models, identity, values, {"": refused_role}, 403)
        org_id = identity.organization_id
        step = compute_step(values, {}, read_models, org_id, ())
        project_id = _uuid(values.get("project"))
        if project_id is None:
            return _page(read_models, identity, values, {"project": "Choose a project."}, 400)
        reused_run = _uuid(values.get("reused_run")) if not step.trains else None
        if not step.trains and reused_run is None:
            return _page(read_models, identity, values, {"reused_run": CHOOSE_THE_ADAPTER}, 400)
        preset, _, metric = values.get("metric", "").partition(":")
        chosen = step.form.values if step.reward_choice == ANOTHER_REWARD else None
        try:
            written = verity.create_experiment(
                org_id, project_id, name=values.get("name", ""), actor=identity.actor, role=identity.role,
                source=source_of_form(values.get("source", ""), values.get("count", "")),
                scoring={"preset": preset}, main_metric=metric, baseline_id=_uuid(values.get("baseline")),
                reward=reward_of_form(chosen) if chosen is not None else None,
                rl={name: values.get(name, "") for name in FIRST_ADVANCED},
                advanced={name: values[name] for name in _advanced_names() if name in values},
                reused_run=reused_run,
                max_answer_tokens=_whole(values.get("evaluation_max_answer_tokens", "")),
            )
        except SettingsInvalid as problem:
            return _page(read_models, identity, {**values, "chosen_reward": step.reward_choice},
                         _placed(problem.errors), 400)
        except NotAllowed as refusal:
            return _page(read_models, identity, values, {"": refusal.message}, 403)
        # the jobs take its steps, as the event log tells them
        return redirect_once_seen(own_writes, written.position, f"/experiments/{written.id}")


def _placed(errors: Mapping[str, str]) -> dict[str, str]:
    """The domain's messages under the form's fields: the evaluation's scoring under Main metric."""
    placed = dict(errors)
    if "scoring" in placed:
        placed.setdefault("main_metric", placed.pop("scoring"))
    return placed
