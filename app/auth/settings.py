"""Settings: members and their roles, Plan and billing, and API tokens. Owners change them; members and viewers
read members and the plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar
from uuid import UUID

from litestar import get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.dependencies import ReadModelsDep
from app.shell.identity import Identity
from domain.access.commands import OWNERS_ONLY, IssuedToken, NewMember
from domain.actors import Actor
from domain.errors import NotAllowed, SettingsInvalid
from domain.organizations import ROLES

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
PLAN_NAMES = {"free": "Free", "pro": "Pro"}
Granted = TypeVar("Granted", NewMember, IssuedToken)


def owners_only(identity: Identity) -> None:
    if not identity.is_owner:
        raise NotAllowed(OWNERS_ONLY)


def _page(name: str, identity: Identity, status_code: int = 200, **context: Any) -> Template:
    base = {"identity": identity, "section": "settings", "tab": name, "roles": ROLES, "plan_names": PLAN_NAMES}
    return Template(f"settings/{name}.html", context={**base, **context}, status_code=status_code)


def _grant(
    console: Console,
    command: Callable[[UUID, str, str, Actor, str], Granted],
    name: str,
    role: str,
    *,
    tab: str,
    listed: Callable[[UUID], Any],
    shown_as: str,
    shown: Callable[[Granted], Any],
) -> Template:
    """Add a member or issue a token (`command`, with a `name` and a `role`): the tab with what was granted shown
    once (201), or the tab again with the domain's words (422)."""
    identity = console.identity
    try:
        granted = command(identity.organization_id, name, role, identity.actor, identity.role)
    except SettingsInvalid as refused:
        context = {tab: listed(identity.organization_id), shown_as: None}
        return _page(tab, identity, 422, **context, errors=refused.errors)
    console.own_writes.see(granted.position)
    context = {tab: listed(identity.organization_id), shown_as: shown(granted)}
    return _page(tab, identity, 201, **context, errors={})


class SettingsController(ConsoleController):
    path = "/settings"
    include_in_schema = False

    @get("/", name="settings:home")
    async def home(self) -> Redirect:
        return Redirect(path="/settings/members")

    # --- members -------------------------------------------------------------------------------------------
    @get("/members", name="settings:members", sync_to_thread=True)
    def members(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _page("members", identity, members=read_models.members(identity.organization_id), added=None, errors={})

    @post("/members", name="settings:add-member", sync_to_thread=True)
    def add_member(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Template:
        email = data.get("email", "")

        def shown(added: NewMember) -> dict[str, str]:
            return {"email": email.strip().casefold(), "password": added.password}

        return _grant(
            console, console.verity.add_member, email, data.get("role", "member"),
            tab="members", listed=console.read_models.members, shown_as="added", shown=shown,
        )

    @post("/members/{account_id:uuid}/role", name="settings:member-role", sync_to_thread=True)
    def change_role(self, account_id: UUID, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Redirect:
        role = data.get("role", "")
        written = console.verity.change_role(console.organization_id, account_id, role, console.actor, console.role)
        return console.redirect_once_seen(written, "/settings/members")

    @post("/members/{account_id:uuid}/remove", name="settings:member-remove", sync_to_thread=True)
    def remove_member(self, account_id: UUID, console: ConsoleDep) -> Redirect:
        written = console.verity.remove_member(console.organization_id, account_id, console.actor, console.role)
        return console.redirect_once_seen(written, "/settings/members")

    # --- Plan and billing ----------------------------------------------------------------------------------
    @get("/plan", name="settings:plan", sync_to_thread=True)
    def plan(self, identity: Identity) -> Template:
        return _page("plan", identity)

    @post("/plan", name="settings:change-plan", sync_to_thread=True)
    def change_plan(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Redirect:
        plan = data.get("plan", "")
        written = console.verity.change_plan(console.organization_id, plan, console.actor, console.role)
        return console.redirect_once_seen(written, "/settings/plan")

    # --- API tokens ----------------------------------------------------------------------------------------
    @get("/tokens", name="settings:tokens", sync_to_thread=True)
    def tokens(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        owners_only(identity)
        return _page(
            "tokens", identity, tokens=read_models.api_tokens(identity.organization_id), issued=None, errors={}
        )

    @post("/tokens", name="settings:issue-token", sync_to_thread=True)
    def issue_token(self, data: Annotated[dict[str, str], FORM], console: ConsoleDep) -> Template:
        owners_only(console.identity)
        return _grant(
            console, console.verity.issue_token, data.get("name", ""), data.get("role", "member"),
            tab="tokens", listed=console.read_models.api_tokens, shown_as="issued", shown=_token_text,
        )

    @post("/tokens/{token_id:uuid}/revoke", name="settings:revoke-token", sync_to_thread=True)
    def revoke_token(self, token_id: UUID, console: ConsoleDep) -> Redirect:
        written = console.verity.revoke_token(console.organization_id, token_id, console.actor, console.role)
        return console.redirect_once_seen(written, "/settings/tokens")


def _token_text(issued: IssuedToken) -> str:
    """A new token's text, shown this once."""
    return issued.text
