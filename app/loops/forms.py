"""The console's Start an automated loop form (001): Name, Benchmark, Score Column, Target, Max Rounds, Give Up
After, Reclaim storage between rounds, and the RL settings every round's run takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.runs.defaults import starting_draft
from app.runs.form import RunForm
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.roles import LAUNCH
from domain.application import Verity
from domain.errors import NotAllowed, SettingsInvalid
from domain.evaluations.benchmarks import BENCHMARKS
from domain.loops.loop import SCORE_COLUMNS
from domain.runs.run_settings import FIELDS_BY_NAME, ROUND_SETTINGS
from domain.runs.settings import run_body_from_api
from projections.rows import ProjectRow

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
RUN_FIELDS = (*ROUND_SETTINGS, "learning_rate")  # the settings of each round's run the form asks for
DEFAULTS = {"name": "math-pairs to 35%", "benchmark": "math_pairs_held_out", "score_column": "accuracy",
            "target": "35", "max_rounds": "8", "give_up_after": "2", "reclaim_storage": "on", "benchmark_size": "64"}


def _starting_values(projects: Sequence[ProjectRow]) -> dict[str, str]:
    """Each round's run starts from the project's own numbers, as Configure a run does (the Demo project's learn
    on the tiny model in minutes), else from the product's defaults."""
    project = str(projects[0].id) if projects else ""
    run_values = RunForm.from_draft(starting_draft(projects), project=project).values
    return {**DEFAULTS, "project": project, **{name: run_values[name] for name in RUN_FIELDS}}


def _training(projects: Sequence[ProjectRow], project_id: UUID, data: Mapping[str, str]) -> dict[str, Any]:
    """The run settings as typed, over the chosen project's own (e.g. its micro batch and training window)."""
    own = next((p.run_defaults for p in projects if p.id == project_id), {})
    return {**own, "rl": {**own.get("rl", {}), **{f: _number(data.get(f, "")) for f in ROUND_SETTINGS}, "reward": None},
            "advanced": {**own.get("advanced", {}), "learning_rate": _number(data.get("learning_rate", ""))}}


def _number(text: str) -> Any:
    """A whole number or a decimal as typed; anything else goes to the domain as is, to be refused in words."""
    text = (text or "").strip()
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _page(read_models: Any, identity: Identity, values: dict[str, str], errors: dict[str, str],
          status_code: int = 200) -> Template:
    context = {"section": "loops", "identity": identity, "values": values, "errors": errors,
               "projects": read_models.projects(identity.organization_id), "benchmarks": BENCHMARKS,
               "score_columns": SCORE_COLUMNS, "run_fields": [FIELDS_BY_NAME[name] for name in RUN_FIELDS]}
    return Template("loops/new.html", context=context, status_code=status_code)


class NewLoopPageController(Controller):
    path = "/loops/new"
    include_in_schema = False

    @get("/", name="loops:new", sync_to_thread=True)
    def form(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _page(read_models, identity, _starting_values(read_models.projects(identity.organization_id)), {})

    @post("/", name="loops:create", sync_to_thread=True)
    def create(self, data: Annotated[dict[str, str], FORM], verity: Verity,
               read_models: ReadModelsDep, own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        values = {**data, "reclaim_storage": "on" if data.get("reclaim_storage") else ""}
        if (refused_role := identity.refusal(LAUNCH)) is not None:  # the form again, as typed, with why not
            return _page(read_models, identity, values, {"": refused_role}, 403)
        try:
            project_id = UUID(data.get("project", ""))
        except ValueError:
            return _page(read_models, identity, values, {"project": "Choose a project."}, 400)
        try:
            projects = read_models.projects(identity.organization_id)
            draft = run_body_from_api({"name": data.get("name", ""), "training": _training(projects, project_id, data)})
            written = verity.create_loop(
                identity.organization_id, project_id, name=data.get("name", ""),
                benchmark=data.get("benchmark", ""), score_column=data.get("score_column", ""),
                target_percent=_number(data.get("target", "")), max_rounds=_number(data.get("max_rounds", "")),
                give_up_after=_number(data.get("give_up_after", "")), reclaim_storage=bool(values["reclaim_storage"]),
                draft=draft, actor=identity.actor, role=identity.role,
                benchmark_size=_number(data.get("benchmark_size", "64")),
            )
        except SettingsInvalid as problem:
            return _page(read_models, identity, values, problem.errors, 400)
        except NotAllowed as refusal:
            return _page(read_models, identity, values, {"": refusal.message}, 403)
        # the jobs take its steps, as the event log tells them
        return redirect_once_seen(own_writes, written.position, f"/loops/{written.id}")
