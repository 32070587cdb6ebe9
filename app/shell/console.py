"""The console a handler works in, as one request-scoped dependency (`console`): the application that takes the
commands, the read models the pages show, who is asking, and the wait that lets whoever wrote see their own write.

A controller that derives from `ConsoleController` lets its handlers ask for `console: ConsoleDep` instead of the
four dependencies one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated
from uuid import UUID

from litestar import Controller
from litestar.di import Provide
from litestar.params import Dependency
from litestar.response import Redirect, Template

from app.shell.commands import OwnWrites, redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity, Role
from domain.access.roles import CHANGE
from domain.actors import Actor
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.written import Written
from projections.store import ReadModels


@dataclass(frozen=True)
class Console:
    """What one request of the console works with (see the module's docstring)."""

    verity: Verity
    read_models: ReadModels
    own_writes: OwnWrites
    identity: Identity
    # the parts of the identity that the commands take: the organization the caller acts in, who the events
    # record as having done it, and the role the commands that check one are given
    organization_id: UUID
    actor: Actor
    role: Role

    def redirect_once_seen(self, written: Written, path: str) -> Redirect:
        """A write's answer: `path` (303), once the read models show the write."""
        return redirect_once_seen(self.own_writes, written.position, path)

    def write_from_form(
        self,
        write: Callable[[], Written],
        form_again: Callable[[Mapping[str, str], int], Template],
        path_of: Callable[[Written], str],
    ) -> Template | Redirect:
        """A form's `write`, for a role that may change things: the page `path_of` names for what it wrote (303,
        once the read models show it); or the form again as typed, with why not: the role's words under "" (403),
        or the domain's under each field (422)."""
        if (refused_role := self.identity.refusal(CHANGE)) is not None:
            return form_again({"": refused_role}, 403)
        try:
            written = write()
        except SettingsInvalid as refused:
            return form_again(refused.errors, 422)
        return self.redirect_once_seen(written, path_of(written))


def provide_console(
    verity: Verity, read_models: ReadModelsDep, own_writes: OwnWritesDep, identity: Identity
) -> Console:
    return Console(
        verity=verity,
        read_models=read_models,
        own_writes=own_writes,
        identity=identity,
        organization_id=identity.organization_id,
        actor=identity.actor,
        role=identity.role,
    )


# The read models are a Protocol, which Litestar can't check with isinstance: the provider gives the console.
ConsoleDep = Annotated[Console, Dependency(skip_validation=True)]


class ConsoleController(Controller):
    """A controller whose handlers may ask for `console`."""

    dependencies = {"console": Provide(provide_console, sync_to_thread=False)}  # noqa: RUF012 (Litestar reads it)
