"""A draft's own page actions: Edit opens the Configure form with its values and saves into the same run; Delete
takes it off the Runs list (the event store keeps its history). Only a draft, and only roles that may save runs:
the domain refuses the rest in words (the guard already keeps viewers to reading)."""

from __future__ import annotations

from functools import partial
from typing import Annotated
from uuid import UUID

from litestar import get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.runs.configure import configure_again, configure_context, form_from_submission
from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.identity import Identity
from domain.access.roles import CHANGE
from domain.errors import NotAllowed, NotFound
from domain.runs.settings import run_body_from_form
from domain.written import Written
from projections.rows import RunDetail

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)


class DraftsPageController(ConsoleController):
    path = "/runs"
    include_in_schema = False

    @get("/{run_id:uuid}/edit", name="runs:edit", sync_to_thread=True)
    def edit(self, run_id: UUID, console: ConsoleDep) -> Template:
        """The Configure form with the draft's values; refused in words for a run that is no longer a draft."""
        run = _editable(console, run_id)
        context = configure_context(console.read_models, console.identity, draft=run.run_settings, editing=run)
        return Template("runs/configure.html", context=context)

    @post("/{run_id:uuid}/edit", name="runs:edit-save", sync_to_thread=True)
    def save(self, run_id: UUID, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Template | Redirect:
        submitted = form_from_submission(data)
        run = _draft(console, run_id)

        def edit_draft() -> Written:
            draft = run_body_from_form(submitted)
            return console.verity.edit_run(console.organization_id, run_id, draft, console.actor)

        form_again = partial(configure_again, console.read_models, console.identity, submitted, editing=run)
        return console.write_from_form(edit_draft, form_again, lambda _written: f"/runs/{run_id}")

    @post("/{run_id:uuid}/delete", name="runs:delete", sync_to_thread=True)
    def delete(self, run_id: UUID, console: ConsoleDep) -> Redirect:
        _found(console, run_id)
        _may_change(console.identity)
        written = console.verity.delete_run(console.organization_id, run_id, console.actor)
        return console.redirect_once_seen(written, "/runs")


def _may_change(identity: Identity) -> None:
    if (refused := identity.refusal(CHANGE)) is not None:
        raise NotAllowed(refused)


def _editable(console: Console, run_id: UUID) -> RunDetail:
    """The draft as the read models show it, once the domain agrees this identity may edit it."""
    run = _draft(console, run_id)
    _may_change(console.identity)
    return run


def _draft(console: Console, run_id: UUID) -> RunDetail:
    """The organization's draft, or the domain's words for a run that is no longer a draft."""
    run = _found(console, run_id)
    console.verity.get_run(console.organization_id, run_id).check_editable()
    return run


def _found(console: Console, run_id: UUID) -> RunDetail:
    """The organization's run; another organization's is not found, whatever the role."""
    run = console.read_models.run(console.organization_id, run_id)
    if run is None:
        raise NotFound("There is no such run in this organization.")
    return run
