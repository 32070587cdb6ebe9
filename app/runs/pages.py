"""The runs pages: the list, Configure a run, and the run page with its live parts.

Each part of the run page (status line, summary, rounds, timeline) has its own address. An htmx request
(`request.htmx`) gets only that part, which carries its `every 2s` trigger while the run is live, so polling stops
by itself once the run has ended. A part's address opened without htmx (a browser tab, a crawler, a history
restore) is sent to the page it belongs to: the run page, or for the timeline its own tab.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any
from uuid import UUID

from litestar import MediaType, Response, get, post
from litestar.concurrency import sync_to_thread
from litestar.enums import RequestEncodingType
from litestar.params import Body, Parameter
from litestar.plugins.htmx import HTMXRequest, HTMXTemplate
from litestar.response import Redirect, Template

from app.probes.reads import with_probed_reward
from app.runs import exports
from app.runs.configure import configure_again, configure_context, form_from_submission, summary_context
from app.runs.defaults import continuing_draft, starting_draft
from app.runs.exports import AdapterUnavailable, adapter_archive, archive_name
from app.runs.listing import runs_list_context
from app.runs.projects import choose_project
from app.runs.prompts import PromptQuery, opened_prompt_context, prompts_context
from app.runs.samples import samples_context
from app.runs.view import run_page_context, stamp
from app.shell.console import ConsoleController, ConsoleDep
from app.shell.dependencies import ReadModelsDep, StorageDep
from app.shell.identity import Identity
from app.shell.kept import KeptByState
from domain.errors import NotFound
from domain.runs.settings import run_body_from_form
from domain.written import Written

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
PARTS = {
    "status": "runs/parts/status.html",
    "summary": "runs/parts/summary.html",
    "reward": "runs/parts/reward.html",
    "metrics": "runs/parts/metrics.html",
    "rounds": "runs/parts/rounds.html",
    "logs": "runs/parts/logs.html",
    "steps": "runs/parts/steps.html",
    "overview": "runs/parts/overview.html",
    "timeline": "runs/parts/timeline.html",
    "prompts": "runs/parts/prompts.html",
}
PAGES = ("overview", "timeline", "prompts")  # the parts whose address is also a whole page: the run page's tabs
# the parts with an address of their own, the run page's and the part's name (/runs/<id>/status): one route over
# them (runs:part); the Overview tab's address is the run page's, /runs/<id>
PARTS_AT = tuple(part for part in PARTS if part != "overview")


class RunsPageController(ConsoleController):
    path = "/runs"
    include_in_schema = False

    @get("/", name="runs:list", sync_to_thread=True)
    def list_runs(self, request: HTMXRequest, read_models: ReadModelsDep, identity: Identity) -> Response:
        """The page; the table alone for its own poll while a run is live (204 when nothing changed)."""
        context = {**runs_list_context(read_models, identity.organization_id), "identity": identity, "section": "runs"}
        if wants_fragment(request):
            if request.query_params.get("v") == context["stamp"]:
                return Response(content=b"", status_code=204)
            return HTMXTemplate(template_name="runs/parts/list_table.html", context=context)
        return Template("runs/list.html", context=context)

    # --- Configure a run ------------------------------------------------------------------------------------
    @get("/new", name="runs:configure", sync_to_thread=True)
    def configure(
        self,
        read_models: ReadModelsDep,
        identity: Identity,
        from_run: UUID | None = None,
        start_run: UUID | None = None,
        probe: UUID | None = None,
    ) -> Template:
        """The form with every default, or with another run's settings (Configure the full run), or set to
        continue a finished run's adapter (Start another run from this adapter), or with a probe's reward (Use this
        reward)."""
        draft = starting_draft(read_models.projects(identity.organization_id))
        if from_run is not None:
            source = found(read_models.run(identity.organization_id, from_run))
            draft = source.run_settings.with_values(kind="full", name=source.name)
        if start_run is not None:
            source = found(read_models.run(identity.organization_id, start_run))
            draft = continuing_draft(draft, source)
        if probe is not None:
            draft = with_probed_reward(read_models, identity, probe, draft)
        return Template("runs/configure.html", context=configure_context(read_models, identity, draft=draft))

    @post("/", name="runs:save", sync_to_thread=True)
    def save(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Template | Redirect:
        submitted = form_from_submission(data)

        def save_draft() -> Written:
            project_id = choose_project(console.read_models, console.organization_id, submitted.get("project"))
            draft = run_body_from_form(submitted)
            return console.verity.save_run(console.organization_id, project_id, draft, console.actor)

        form_again = partial(configure_again, console.read_models, console.identity, submitted)
        return console.write_from_form(save_draft, form_again, lambda written: f"/runs/{written.id}")

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
        # the Reward section changes with its kind of answer, and says when the reward is taken from the baseline
        redraw_reward = bool(request.htmx) and request.htmx.trigger_name in ("reward_preset", "baseline")
        trigger = (request.htmx.trigger_name or "") if request.htmx else ""
        context = summary_context(read_models, identity, submitted, redraw_reward=redraw_reward, trigger=trigger)
        return HTMXTemplate(template_name="runs/parts/training_summary_swap.html", context=context)

    # --- the run page and its parts -------------------------------------------------------------------------
    @get("/{run_id:uuid}", name="runs:detail", sync_to_thread=True)
    def detail(
        self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity, storage: StorageDep
    ) -> Response:
        return _run_page(request, read_models, identity, run_id, part="overview", storage=storage)

    @get([f"/{{run_id:uuid}}/{part}" for part in PARTS_AT], name="runs:part")
    async def run_part(
        self, request: HTMXRequest, run_id: UUID, read_models: ReadModelsDep, identity: Identity, storage: StorageDep
    ) -> Response:
        """A part at its own address: the run page's and the part's name, /runs/<id>/status. Only PARTS_AT have one,
        so any other name is not found, as an address no route answers."""
        part = request.url.path.rstrip("/").rsplit("/", 1)[-1]
        # async, drawing in a worker thread itself: Litestar 2.25 wraps a sync handler of several paths in
        # sync_to_thread once per path, so from the second path on it would answer a coroutine
        return await sync_to_thread(_run_page, request, read_models, identity, run_id, part=part, storage=storage)

    @get("/{run_id:uuid}/samples", name="runs:samples", sync_to_thread=True)
    def samples(
        self,
        request: HTMXRequest,
        run_id: UUID,
        read_models: ReadModelsDep,
        identity: Identity,
        storage: StorageDep,
        round_number: Annotated[int | None, Parameter(query="round", ge=1)] = None,
    ) -> Response:
        """Samples of the chosen round (the latest by default, which a live page keeps following)."""
        run = found(read_models.run(identity.organization_id, run_id))
        if not wants_fragment(request):
            return _to_whole_page(run_id)
        unchanged = _unchanged(request, run)
        if unchanged is not None and round_number is None:
            return unchanged

        def context_of() -> dict[str, Any]:
            context = {"run": run, "live": run.live, "stamp": stamp(run), "identity": identity}
            return {**context, **samples_context(read_models, identity, run, storage, round_number)}

        return _drawn(request, identity, run, ("samples", round_number), "runs/parts/samples.html", context_of)

    @get("/{run_id:uuid}/prompts/{prompt_index:int}", name="runs:prompt", sync_to_thread=True)
    def prompt(
        self, request: HTMXRequest, run_id: UUID, prompt_index: int, read_models: ReadModelsDep, identity: Identity,
        storage: StorageDep,
    ) -> Response:
        """An opened prompt of the Prompts tab: its draws, and its answers read from the rollout files."""
        run = found(read_models.run(identity.organization_id, run_id))
        if not wants_fragment(request):
            return Redirect(path=f"/runs/{run_id}/prompts", status_code=303)
        show_all = request.query_params.get("all") == "1"
        context = opened_prompt_context(read_models, identity, run, storage, prompt_index, show_all)
        if context is None:
            raise NotFound(f"This run never drew prompt {prompt_index}.")
        return HTMXTemplate(template_name="runs/parts/prompt.html",
                            context={**context, "run": run, "show_all": show_all, "identity": identity})

    # --- what a finished run gives away ---------------------------------------------------------------------
    @get("/{run_id:uuid}/adapter.zip", name="runs:adapter", sync_to_thread=True)
    def adapter(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity, storage: StorageDep) -> Response:
        """Use this adapter: the adapter's files and the run's config, as one archive."""
        run = found(read_models.run(identity.organization_id, run_id))
        try:
            archive = adapter_archive(run, storage)
        except AdapterUnavailable as problem:
            raise NotFound(str(problem)) from None
        return _download(archive, "application/zip", archive_name(run))

    @get("/{run_id:uuid}/history.json", name="runs:history-json", sync_to_thread=True)
    def history_json(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Response:
        run = found(read_models.run(identity.organization_id, run_id))
        org = identity.organization_id
        history = exports.history_json(run, read_models.rounds(org, run_id), read_models.timeline(org, run_id))
        body = json.dumps(history, indent=2).encode()
        return _download(body, "application/json", f"run-{str(run_id)[:8]}-history.json")

    @get("/{run_id:uuid}/rounds.csv", name="runs:rounds-csv", sync_to_thread=True)
    def rounds_csv(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Response:
        found(read_models.run(identity.organization_id, run_id))
        body = exports.rounds_csv(read_models.rounds(identity.organization_id, run_id)).encode()
        return _download(body, "text/csv", f"run-{str(run_id)[:8]}-rounds.csv")

    @get("/{run_id:uuid}/events.csv", name="runs:events-csv", sync_to_thread=True)
    def events_csv(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Response:
        found(read_models.run(identity.organization_id, run_id))
        body = exports.events_csv(read_models.timeline(identity.organization_id, run_id)).encode()
        return _download(body, "text/csv", f"run-{str(run_id)[:8]}-events.csv")


def _run_page(
    request: HTMXRequest,
    read_models: ReadModelsDep,
    identity: Identity,
    run_id: UUID,
    *,
    part: str,
    storage: Any,
) -> Response:
    """The part alone to htmx (204 when its poll's stamp is current); the whole page, on the part's tab, to a
    browser for the run page and the timeline; the run page for any other part."""
    run = found(read_models.run(identity.organization_id, run_id))
    fragment = wants_fragment(request)
    if not fragment and part not in PAGES:
        return _to_whole_page(run_id)
    if fragment and (unchanged := _unchanged(request, run)) is not None:
        return unchanged
    tab = part if part in PAGES else "overview"
    show_all = request.query_params.get("all") == "1"
    query = PromptQuery.of(request.query_params) if part == "prompts" else None

    def context_of() -> dict[str, Any]:
        context = run_page_context(read_models, identity, run, tab=tab, show_all=show_all,
                                   part=part if fragment else None)
        if part == "overview":
            context.update(samples_context(read_models, identity, run, storage, None))
        if query is not None:
            context.update(prompts_context(read_models, identity, run, query, show_all))
        return context

    if fragment:
        return _drawn(request, identity, run, (part, show_all, query), PARTS[part], context_of)
    return Template("runs/detail.html", context=context_of())


# A part of a live run as drawn for one state of the run and one role: every viewer of that run polls its parts,
# and once a round lands each of them asks for them all again; the first request draws, the others get its HTML.
# The parts hold no one's own data: the CSRF token reaches forms from the page's head (templates/shell/base.html),
# and what a part shows of its viewer is what their role and plan allow.
_drawn_parts: KeptByState[bytes] = KeptByState(512)


def _drawn(
    request: HTMXRequest,
    identity: Identity,
    run: Any,
    asked: tuple[Any, ...],
    template_name: str,
    context_of: Callable[[], dict[str, Any]],
) -> Response:
    key = (id(request.app), identity.organization_id, run.id, stamp(run), identity.role, identity.plan, *asked)

    def draw() -> tuple[bytes, bool]:
        context = context_of()
        template = request.app.template_engine.get_template(template_name)  # type: ignore[union-attr]
        # samples that could not be read may be readable at the next try (Retry): not kept
        return template.render(**context, request=request, csrf_input="").encode(), not context.get("samples_error")

    return Response(content=_drawn_parts.get(key, draw), media_type=MediaType.HTML)


def _to_whole_page(run_id: UUID) -> Redirect:
    """A part asked for outside the page (no htmx): the run page it is a part of, rather than a bare fragment."""
    return Redirect(path=f"/runs/{run_id}", status_code=303)


def _unchanged(request: HTMXRequest, run: Any) -> Response | None:
    """A live part's poll when nothing changed since it was drawn: 204, so htmx swaps nothing."""
    if wants_fragment(request) and request.query_params.get("v") == stamp(run):
        return Response(content=b"", status_code=204)
    return None


def _download(body: bytes, media_type: str, filename: str) -> Response:
    return Response(
        content=body,
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def wants_fragment(request: HTMXRequest) -> bool:
    """An htmx swap wants the part; a history restore (back button after hx-push-url) wants the whole page."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def found(run: Any) -> Any:
    if run is None:
        raise NotFound("There is no such run in this organization.")
    return run
