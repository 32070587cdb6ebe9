"""The routes an evaluation, an experiment and a training loop share, made for each from what differs.

Each is queued work with the same pages (its section's list, its own page) and the same API around its own create
command (read it, stop it): `section` names the routes and the template folder ("loops"), `work` one piece of it
("loop", also the name of its id's path parameter, `loop_id`). A route made here is a controller's attribute, as a
handler written out with its decorator would be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.handlers import HTTPRouteHandler
from litestar.response import Redirect, Template

from app.evaluations.waiting import queued_work_page
from app.shell.commands import OwnWrites, redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.actors import Actor
from domain.application import Verity
from domain.written import Written

ReadRows = Callable[[Any, UUID], list[dict[str, Any]]]  # (tables, organization id) -> the section's rows
ReadContext = Callable[[Any, Identity, UUID], dict[str, Any]]  # (read models, identity, id) -> one page's context
CreateCommand = Callable[[Verity, dict[str, Any], Identity], Written]  # (verity, JSON body, identity)
StopCommand = Callable[[Verity, UUID, UUID, Actor], Written]  # Verity.stop_loop, ...


def _id_path(work: str) -> str:
    return f"/{{{work}_id:uuid}}"


def _work_id(request: Request[Any, Any, Any], work: str) -> UUID:
    work_id: UUID = request.path_params[f"{work}_id"]
    return work_id


class WorkPagesController(Controller):
    """The console's pages of one section of queued work, whose routes are made below; no part of the API."""

    include_in_schema = False


def seen_reply(own_writes: OwnWrites, written: Written) -> dict[str, Any]:
    """An API command's answer, once the read models show it: what it wrote and where the event log reached."""
    own_writes.see(written.position)
    return {"id": str(written.id), "position": written.position}


def list_page(section: str, read_rows: ReadRows) -> HTTPRouteHandler:
    """GET / (`<section>:list`): `<section>/list.html` with the organization's rows."""

    @get("/", name=f"{section}:list", sync_to_thread=True)
    def list_rows(self: Controller, read_models: ReadModelsDep, identity: Identity) -> Template:
        rows = read_rows(read_models.tables, identity.organization_id)
        return Template(f"{section}/list.html", context={section: rows, "section": section, "identity": identity})

    return list_rows


def detail_page(section: str, work: str, read_context: ReadContext) -> HTTPRouteHandler:
    """GET /<id> (`<section>:detail`): the page of one piece of work, its body alone when htmx re-asks for it."""

    @get(_id_path(work), name=f"{section}:detail", sync_to_thread=True)
    def detail(
        self: Controller, request: Request[Any, Any, Any], read_models: ReadModelsDep, identity: Identity
    ) -> Template:
        context = read_context(read_models, identity, _work_id(request, work))
        return queued_work_page(request, read_models, identity, context, work, section)

    return detail


def stop_page(section: str, work: str, stop_command: StopCommand) -> HTTPRouteHandler:
    """POST /<id>/stop (`<section>:stop`): stop it, then its page once the read models show it stopped."""

    @post(f"{_id_path(work)}/stop", name=f"{section}:stop", sync_to_thread=True)
    def stop(
        self: Controller, request: Request[Any, Any, Any], verity: Verity, own_writes: OwnWritesDep, identity: Identity
    ) -> Redirect:
        work_id = _work_id(request, work)
        written = stop_command(verity, identity.organization_id, work_id, identity.actor)
        return redirect_once_seen(own_writes, written.position, f"/{section}/{work_id}")

    return stop


def create_api(section: str, create_command: CreateCommand) -> HTTPRouteHandler:
    """POST / (`api:<section>:create`, 201): the command, its docstring the route's description (the body it reads)."""

    def create(
        self: Controller, data: dict[str, Any], verity: Verity, own_writes: OwnWritesDep, identity: Identity
    ) -> dict[str, Any]:
        # the jobs take its steps (or evaluate it), as the event log tells them
        return seen_reply(own_writes, create_command(verity, data, identity))

    create.__doc__ = create_command.__doc__
    return post("/", name=f"api:{section}:create", status_code=201, sync_to_thread=True)(create)


def detail_api(section: str, work: str, read_context: ReadContext, keys: tuple[str, ...]) -> HTTPRouteHandler:
    """GET /<id> (`api:<section>:detail`): the `keys` of what its page shows."""

    @get(_id_path(work), name=f"api:{section}:detail", sync_to_thread=True)
    def detail(
        self: Controller, request: Request[Any, Any, Any], read_models: ReadModelsDep, identity: Identity
    ) -> dict[str, Any]:
        context = read_context(read_models, identity, _work_id(request, work))
        return {key: context[key] for key in keys}

    return detail


def stop_api(section: str, work: str, stop_command: StopCommand) -> HTTPRouteHandler:
    """POST /<id>/stop (`api:<section>:stop`)."""

    @post(f"{_id_path(work)}/stop", name=f"api:{section}:stop", sync_to_thread=True)
    def stop(
        self: Controller, request: Request[Any, Any, Any], verity: Verity, own_writes: OwnWritesDep, identity: Identity
    ) -> dict[str, Any]:
        written = stop_command(verity, identity.organization_id, _work_id(request, work), identity.actor)
        return seen_reply(own_writes, written)

    return stop
