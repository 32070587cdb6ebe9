"""Compare runs: the page (`/runs/compare?run=<id>&run=<id>`), an opened shared prompt as its part, and the same as
JSON (`GET /api/runs/compare`). With fewer than two runs the page offers the runs of their project to choose from
(the run page's "Compare with…" opens it with that run chosen)."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Response, get
from litestar.params import Parameter
from litestar.plugins.htmx import HTMXRequest, HTMXTemplate
from litestar.response import Redirect, Template

from app.runs.compare import FEWEST_RUNS, MOST_RUNS, compared_settings, comparison_json, round_charts, runs_to_compare
from app.runs.compare_prompts import (
    opened_shared_prompt,
    shared_prompts,
    shared_prompts_context,
    shared_prompts_json,
)
from app.shell.console import ConsoleController
from app.shell.dependencies import ReadModelsDep, StorageDep
from app.shell.identity import Identity
from domain.errors import NotFound
from projections.store import ReadModels

RunIds = Annotated[list[UUID] | None, Parameter(query="run", required=False)]


class RunsComparePageController(ConsoleController):
    path = "/runs/compare"
    include_in_schema = False

    @get("/", name="runs:compare", sync_to_thread=True)
    def compare(
        self, read_models: ReadModelsDep, identity: Identity, run_ids: RunIds = None, project: UUID | None = None
    ) -> Template:
        """The comparison of the runs chosen; with fewer than two, the runs to choose from."""
        org = identity.organization_id
        chosen = list(dict.fromkeys(run_ids or []))
        if len(chosen) < FEWEST_RUNS:
            return Template("runs/compare_choose.html", context=_choose_context(read_models, identity, chosen, project))
        runs = runs_to_compare(read_models, org, chosen)
        project_row = next((p for p in read_models.projects(org) if p.id == runs[0].run.project_id), None)
        context = {
            "runs": runs,
            "project": project_row,
            "settings": compared_settings(runs),
            "charts": round_charts(runs),
            "run_query": _run_query(chosen),
            "identity": identity,
            "section": "runs",
            **shared_prompts_context(shared_prompts(read_models, org, runs)),
        }
        return Template("runs/compare.html", context=context)

    @get("/prompts/{prompt_index:int}", name="runs:compare-prompt", sync_to_thread=True)
    def prompt(
        self, request: HTMXRequest, prompt_index: int, read_models: ReadModelsDep, identity: Identity,
        storage: StorageDep, run_ids: RunIds = None,
    ) -> Response:
        """An opened shared prompt: round by round, each run's answers side by side with their scores."""
        chosen = list(dict.fromkeys(run_ids or []))
        if len(chosen) < FEWEST_RUNS:  # a prompt of no comparison: nothing to show, nor a page to send to
            raise NotFound("Choose two to six runs of one project to compare their prompts.")
        if not request.htmx:  # the part asked for outside the page: the page it belongs to
            return Redirect(path=f"/runs/compare?{_run_query(chosen)}", status_code=303)
        runs = runs_to_compare(read_models, identity.organization_id, chosen)
        show_all = request.query_params.get("all") == "1"
        context = opened_shared_prompt(read_models, identity.organization_id, runs, storage, prompt_index, show_all)
        if context is None:
            raise NotFound(f"Not every one of these runs drew prompt {prompt_index}.")
        return HTMXTemplate(template_name="runs/parts/compare_prompt.html",
                            context={**context, "runs": runs, "run_query": _run_query(chosen), "identity": identity})


class RunsCompareApiController(ConsoleController):
    path = "/runs/compare"
    tags = ("Runs",)

    @get("/", name="api:runs:compare", sync_to_thread=True)
    def compare(self, read_models: ReadModelsDep, identity: Identity, run_ids: RunIds = None) -> dict[str, Any]:
        """Compare two to six runs of one project: the settings that differ (and those shared), each run's rounds
        (reward, validation, signal, cut-off share, answer tokens, seconds) and the prompts every run drew."""
        org = identity.organization_id
        runs = runs_to_compare(read_models, org, run_ids or [])
        prompts = shared_prompts_json(shared_prompts(read_models, org, runs), runs)
        return comparison_json(runs, compared_settings(runs), prompts)


def _run_query(run_ids: list[UUID]) -> str:
    return "&".join(f"run={run_id}" for run_id in run_ids)


def _choose_context(read_models: ReadModels, identity: Identity, chosen: list[UUID],
                    project_id: UUID | None) -> dict[str, Any]:
    """The runs to choose from: the project of the run already chosen (or the project asked for), else every
    project's; drafts, which have nothing to compare, are left out."""
    org = identity.organization_id
    if chosen:
        first = read_models.run(org, chosen[0])
        if first is None:
            raise NotFound(f"There is no run {chosen[0]} in this organization.")
        project_id = first.project_id
    projects = [p for p in read_models.projects(org) if project_id is None or p.id == project_id]
    if project_id is not None and not projects:
        raise NotFound("There is no such project in this organization.")
    groups = [(project, [r for r in read_models.runs(org, project.id) if r.state != "draft"]) for project in projects]
    return {"groups": [(project, runs) for project, runs in groups if runs or project_id is not None],
            "chosen": {str(run_id) for run_id in chosen}, "most_runs": MOST_RUNS, "identity": identity,
            "section": "runs"}
