"""The commands on a run's page: Launch, Cancel, Retry, Continue from round N, Duplicate, Merge model and Score
against baseline. Each records its command and goes back to the run page; a refusal (the plan, the role, launch
readiness) draws the run page again with the words beside its actions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from uuid import UUID

from litestar import Response, post
from litestar.plugins.htmx import HTMXRequest
from litestar.response import Redirect, Template

from app.runs.merging import ask_for_merge
from app.runs.pages import FORM, found
from app.runs.readiness import continue_when_ready, launch_when_ready
from app.runs.samples import samples_context
from app.runs.view import run_page_context
from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.dependencies import StorageDep
from app.shell.errors import status_of
from app.shell.jobs import jobs_of
from domain.errors import DomainError, NotAllowed, NotReady, PlanNeeded
from domain.written import Written


class RunActionsController(ConsoleController):
    path = "/runs"
    include_in_schema = False

    @post("/{run_id:uuid}/merge", name="runs:merge", sync_to_thread=True)
    def merge(self, request: HTMXRequest, run_id: UUID, console: ConsoleDep) -> Redirect:
        """Merge model: recorded on the run, then a job writes the base model with the adapter merged in."""
        written = ask_for_merge(console.verity, console.identity, run_id, jobs_of(request))
        return console.redirect_once_seen(written, f"/runs/{run_id}")

    @post("/{run_id:uuid}/launch", name="runs:launch", sync_to_thread=True)
    def launch(self, request: HTMXRequest, run_id: UUID, console: ConsoleDep, storage: StorageDep) -> Response:
        """Launch, or the run page again with why not: the plan (with Upgrade or See plans), the role, or launch
        readiness (the worker can't load what the run needs), before anything is queued."""
        return _launched(console.verity.launch_run, request, run_id, console, storage)

    @post("/{run_id:uuid}/cancel", name="runs:cancel", sync_to_thread=True)
    def cancel(self, run_id: UUID, console: ConsoleDep) -> Redirect:
        return _to_run(console, console.verity.cancel_run(console.organization_id, run_id, console.actor))

    @post("/{run_id:uuid}/retry", name="runs:retry", sync_to_thread=True)
    def retry(self, request: HTMXRequest, run_id: UUID, console: ConsoleDep, storage: StorageDep) -> Response:
        """Retry: a new run with the same settings, launched at once; refused as Launch is."""
        return _launched(console.verity.retry_run, request, run_id, console, storage)

    @post("/{run_id:uuid}/continue", name="runs:continue", sync_to_thread=True)
    def continue_run(self, request: HTMXRequest, run_id: UUID, console: ConsoleDep, storage: StorageDep,
                     data: Annotated[dict[str, str], FORM]) -> Response:
        """Continue from round N, optionally with more Rounds or a new Time limit (empty keeps the run's): the same
        run goes on from its last round's checkpoint; a refusal (the run, a setting, the plan) shows on its page."""
        try:
            written = continue_when_ready(request, console, run_id, data)
        except DomainError as refused:  # a setting out of bounds, not continuable, the plan, the role, readiness
            return _refused_on_run_page(console, run_id, refused, storage)
        return _to_run(console, written)

    @post("/{run_id:uuid}/score-against-baseline", name="runs:score-against-baseline", sync_to_thread=True)
    def score_against_baseline(self, run_id: UUID, console: ConsoleDep) -> Redirect:
        """000's Score against baseline: the adapter on the baseline's test examples, scoring and main metric; the
        evaluation's page follows it and shows the two side by side."""
        written = console.verity.score_against_baseline(console.organization_id, run_id, console.actor)
        # the jobs evaluate it, as the event log tells them
        return console.redirect_once_seen(written, f"/evaluations/{written.id}")

    @post("/{run_id:uuid}/duplicate", name="runs:duplicate", sync_to_thread=True)
    def duplicate(self, run_id: UUID, console: ConsoleDep) -> Redirect:
        return _to_run(console, console.verity.duplicate_run(console.organization_id, run_id, console.actor))


def _launched(
    command: Callable[..., Written], request: HTMXRequest, run_id: UUID, console: Console, storage: Any
) -> Response:
    """Launch or Retry (`command`), then the page of the run it queued; or the run page again with why not."""
    try:
        written = launch_when_ready(command, request, console.read_models, console.identity, run_id)
    except (NotAllowed, NotReady) as refused:
        return _refused_on_run_page(console, run_id, refused, storage)
    return _to_run(console, written)


def _refused_on_run_page(console: Console, run_id: UUID, refused: DomainError, storage: Any) -> Template:
    """The run page with the refusal beside its actions (a plan's with Upgrade or See plans): the person stays
    where they were, rather than on a bare error page."""
    read_models, identity = console.read_models, console.identity
    run = found(read_models.run(identity.organization_id, run_id))
    context = run_page_context(read_models, identity, run, tab="overview")
    context.update(samples_context(read_models, identity, run, storage, None))
    context.update(refusal=refused.message, plan_refused=isinstance(refused, PlanNeeded))
    return Template("runs/detail.html", context=context, status_code=status_of(refused))


def _to_run(console: Console, written: Written) -> Redirect:
    """The page of the run a command saved, once the read models show it."""
    return console.redirect_once_seen(written, f"/runs/{written.id}")
