"""The runs pages: the list, Configure a run, and the run page with its live parts.

Each part of the run page (status line, summary, rounds, timeline) has its own address. A normal request gets
the whole page; an htmx request (`request.htmx`) gets only that part, which carries its `every 2s` trigger
while the run is live, so polling stops by itself once the run has ended.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.plugins.htmx import HTMXRequest, HTMXTemplate
from litestar.response import Redirect, Template

from app.runs.configure import configure_context, form_from_submission, summary_context
from app.runs.projects import choose_project
from app.runs.view import run_page_context
from app.shell.commands import OwnWrites
from app.shell.dependencies import LauncherDep, OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotFound, SettingsInvalid
from domain.runs.settings import RunDraft, run_body_from_form

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
PARTS = {
    "status": "runs/parts/status.html",
    "summary": "runs/parts/summary.html",
    "rounds": "runs/parts/rounds.html",
    "overview": "runs/parts/overview.html",
    "timeline": "runs/parts/timeline.html",
}


class RunsPageController(Controller):
    path = "/runs"
    include_in_schema = False

    @get("/", name="runs:list", sync_to_thread=True)
    def list_runs(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        runs = read_models.runs(identity.organization_id)
        return Template("runs/list.html", context={"runs": runs, "identity": identity, "section": "runs"})

    # --- Configure a run ------------------------------------------------------------------------------------
    @get("/new", name="runs:configure", sync_to_thread=True)
    def configure(self, read_models: ReadModelsDep, identity: Identity, from_run: UUID | None = None) -> Template:
        """The form with every default, or with another run's settings (Configure the full run, Duplicate)."""
        draft = RunDraft(kind="full")
        if from_run is not None:
            source = _found(read_models.run(identity.organization_id, from_run))
            draft = RunDraft.from_saved(source.settings).with_values(kind="full", name=source.name)
        return Template("runs/configure.html", context=configure_context(read_models, identity, draft=draft))

    @post("/", name="runs:save", sync_to_thread=True)
    def save(
        self,
        data: Annotated[dict[str, str], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template | Redirect:
        submitted = form_from_submission(data)
        try:
            project_id = choose_project(read_models, identity.organization_id, submitted.get("project"))
            written = verity.save_run(
                identity.organization_id, project_id, run_body_from_form(submitted), identity.actor
            )
        except SettingsInvalid as refused:
            context = configure_context(read_models, identity, values=submitted, errors=refused.errors)
            return Template("runs/configure.html", context=context, status_code=422)
        own_writes.see(written.position)
        return Redirect(path=f"/runs/{written.id}", status_code=303)

    @post("/summary", name="runs:training-summary", sync_to_thread=True)
    def training_summary(
        self,
        request: HTMXRequest,
        data: Annotated[dict[str, str], FORM],
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template:
        """The Training Summary sidebar for the form as it stands, each field's message swapped in place."""
        submitted = form_from_submission(data)
        redraw_reward = bool(request.htmx) and request.htmx.trigger_name == "reward_preset"
        context = summary_context(read_models, identity, submitted, redraw_reward=redraw_reward)
        return HTMXTemplate(template_name="runs/parts/training_summary_swap.html", context=context)

    # --- the run page and its parts -------------------------------------------------------------------------
    @get("/{run_id:uuid}", name="runs:detail", sync_to_thread=True)
    def detail(self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _run_page(request, read_models, identity, run_id, part="overview", tab="overview")

    @get("/{run_id:uuid}/timeline", name="runs:timeline", sync_to_thread=True)
    def timeline(self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _run_page(request, read_models, identity, run_id, part="timeline", tab="timeline")

    @get("/{run_id:uuid}/status", name="runs:status", sync_to_thread=True)
    def status(self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _run_page(request, read_models, identity, run_id, part="status", tab="overview")

    @get("/{run_id:uuid}/summary", name="runs:summary", sync_to_thread=True)
    def summary(self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _run_page(request, read_models, identity, run_id, part="summary", tab="overview")

    @get("/{run_id:uuid}/rounds", name="runs:rounds", sync_to_thread=True)
    def rounds(self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _run_page(request, read_models, identity, run_id, part="rounds", tab="overview")

    # --- commands from the run page -------------------------------------------------------------------------
    @post("/{run_id:uuid}/launch", name="runs:launch", sync_to_thread=True)
    def launch(
        self,
        run_id: UUID,
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
        launcher: LauncherDep,
    ) -> Redirect:
        written = verity.launch_run(identity.organization_id, run_id, identity.actor, identity.role)
        launcher(run_id)
        return _to_run(own_writes, written.id, written.position)

    @post("/{run_id:uuid}/cancel", name="runs:cancel", sync_to_thread=True)
    def cancel(
        self, run_id: UUID, verity: Verity, own_writes: OwnWritesDep, read_models: ReadModelsDep, identity: Identity
    ) -> Redirect:
        written = verity.cancel_run(identity.organization_id, run_id, identity.actor)
        return _to_run(own_writes, written.id, written.position)

    @post("/{run_id:uuid}/retry", name="runs:retry", sync_to_thread=True)
    def retry(
        self,
        run_id: UUID,
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
        launcher: LauncherDep,
    ) -> Redirect:
        written = verity.retry_run(identity.organization_id, run_id, identity.actor, identity.role)
        launcher(written.id)
        return _to_run(own_writes, written.id, written.position)

    @post("/{run_id:uuid}/duplicate", name="runs:duplicate", sync_to_thread=True)
    def duplicate(
        self, run_id: UUID, verity: Verity, own_writes: OwnWritesDep, read_models: ReadModelsDep, identity: Identity
    ) -> Redirect:
        written = verity.duplicate_run(identity.organization_id, run_id, identity.actor)
        return _to_run(own_writes, written.id, written.position)


def _run_page(
    request: HTMXRequest, read_models: ReadModelsDep, identity: Identity, run_id: UUID, *, part: str, tab: str
) -> Template:
    context: dict[str, Any] = run_page_context(
        read_models, identity, _found(read_models.run(identity.organization_id, run_id)), tab=tab
    )
    if wants_fragment(request):
        return HTMXTemplate(template_name=PARTS[part], context=context)
    return Template("runs/detail.html", context=context)


def wants_fragment(request: HTMXRequest) -> bool:
    """An htmx swap wants the part; a history restore (back button after hx-push-url) wants the whole page."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _to_run(own_writes: OwnWrites, run_id: UUID, position: int) -> Redirect:
    own_writes.see(position)
    return Redirect(path=f"/runs/{run_id}", status_code=303)


def _found(run: Any) -> Any:
    if run is None:
        raise NotFound("There is no such run in this organization.")
    return run
