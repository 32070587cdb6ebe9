"""A draft's own page actions: Edit opens the Configure form with its values and saves into the same run; Delete
takes it off the Runs list (the event store keeps its history). Only a draft, and only roles that may save runs:
the domain refuses the rest in words (the guard already keeps viewers to reading)."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.runs.configure import configure_again, configure_context, form_from_submission
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.roles import CHANGE
from domain.application import Verity
from domain.errors import NotAllowed, NotFound, SettingsInvalid
from domain.runs.settings import run_body_from_form
from projections.rows import RunDetail

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)


class DraftsPageController(Controller):
    path = "/runs"
    include_in_schema = False

    @get("/{run_id:uuid}/edit", name="runs:edit", sync_to_thread=True)
    def edit(self, run_id: UUID, verity: Verity, read_models: ReadModelsDep, identity: Identity) -> Template:
        """The Configure form with the draft's values; refused in words for a run that is no longer a draft."""
        run = _editable(verity, read_models, identity, run_id)
        context = configure_context(read_models, identity, draft=run.run_settings, editing=run)
        return Template("runs/configure.html", context=context)

    @post("/{run_id:uuid}/edit", name="runs:edit-save", sync_to_thread=True)
    def save(
        self,
        run_id: UUID,
        data: Annotated[dict[str, str], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template | Redirect:
        submitted = form_from_submission(data)
        run = _draft(verity, read_models, identity, run_id)
        if (refused_role := identity.refusal(CHANGE)) is not None:  # the form again, as typed, with why not
            return configure_again(read_models, identity, submitted, {"": refused_role}, 403, editing=run)
        try:
            written = verity.edit_run(identity.organization_id, run_id, run_body_from_form(submitted), identity.actor)
        except SettingsInvalid as refused:
            return configure_again(read_models, identity, submitted, refused.errors, 422, editing=run)
        return redirect_once_seen(own_writes, written.position, f"/runs/{run_id}")

    @post("/{run_id:uuid}/delete", name="runs:delete", sync_to_thread=True)
    def delete(
        self, run_id: UUID, verity: Verity, own_writes: OwnWritesDep, read_models: ReadModelsDep, identity: Identity
    ) -> Redirect:
        _found(read_models, identity, run_id)
        _may_change(identity)
        written = verity.delete_run(identity.organization_id, run_id, identity.actor)
        return redirect_once_seen(own_writes, written.position, "/runs")


def _may_change(identity: Identity) -> None:
    if (refused := identity.refusal(CHANGE)) is not None:
        raise NotAllowed(refused)


def _editable(verity: Verity, read_models: ReadModelsDep, identity: Identity, run_id: UUID) -> RunDetail:
    """The draft as the read models show it, once the domain agrees this identity may edit it."""
    run = _draft(verity, read_models, identity, run_id)
    _may_change(identity)
    return run


def _draft(verity: Verity, read_models: ReadModelsDep, identity: Identity, run_id: UUID) -> RunDetail:
    """The organization's draft, or the domain's words for a run that is no longer a draft."""
    run = _found(read_models, identity, run_id)
    verity.get_run(identity.organization_id, run_id).check_editable()
    return run


def _found(read_models: ReadModelsDep, identity: Identity, run_id: UUID) -> RunDetail:
    """The organization's run; another organization's is not found, whatever the role."""
    run = read_models.run(identity.organization_id, run_id)
    if run is None:
        raise NotFound("There is no such run in this organization.")
    return run
