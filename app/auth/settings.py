"""Settings: members and their roles, Plan and billing, and API tokens. Owners change them; members and viewers
read members and the plan."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.commands import OWNERS_ONLY
from domain.application import Verity
from domain.errors import NotAllowed, SettingsInvalid
from domain.organizations import ROLES

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
PLAN_NAMES = {"free": "Free", "pro": "Pro"}


def owners_only(identity: Identity) -> None:
    if not identity.is_owner:
        raise NotAllowed(OWNERS_ONLY)


def _page(name: str, identity: Identity, status_code: int = 200, **context: Any) -> Template:
    base = {"identity": identity, "section": "settings", "tab": name, "roles": ROLES, "plan_names": PLAN_NAMES}
    return Template(f"settings/{name}.html", context={**base, **context}, status_code=status_code)


class SettingsController(Controller):
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
    def add_member(
        self,
        data: Annotated[dict[str, str], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template:
        try:
            added = verity.add_member(
                identity.organization_id,
                data.get("email", ""),
                data.get("role", "member"),
                identity.actor,
                identity.role,
            )
        except SettingsInvalid as refused:
            members = read_models.members(identity.organization_id)
            return _page("members", identity, 422, members=members, added=None, errors=refused.errors)
        own_writes.see(added.position)
        members = read_models.members(identity.organization_id)
        shown = {"email": data.get("email", "").strip().casefold(), "password": added.password}
        return _page("members", identity, 201, members=members, added=shown, errors={})

    @post("/members/{account_id:uuid}/role", name="settings:member-role", sync_to_thread=True)
    def change_role(
        self,
        account_id: UUID,
        data: Annotated[dict[str, str], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        identity: Identity,
    ) -> Redirect:
        written = verity.change_role(
            identity.organization_id, account_id, data.get("role", ""), identity.actor, identity.role
        )
        return redirect_once_seen(own_writes, written.position, "/settings/members")

    @post("/members/{account_id:uuid}/remove", name="settings:member-remove", sync_to_thread=True)
    def remove_member(self, account_id: UUID, verity: Verity, own_writes: OwnWritesDep, identity: Identity) -> Redirect:
        written = verity.remove_member(identity.organization_id, account_id, identity.actor, identity.role)
        return redirect_once_seen(own_writes, written.position, "/settings/members")

    # --- Plan and billing ----------------------------------------------------------------------------------
    @get("/plan", name="settings:plan", sync_to_thread=True)
    def plan(self, identity: Identity) -> Template:
        return _page("plan", identity)

    @post("/plan", name="settings:change-plan", sync_to_thread=True)
    def change_plan(
        self, data: Annotated[dict[str, str], FORM], verity: Verity, own_writes: OwnWritesDep, identity: Identity
    ) -> Redirect:
        written = verity.change_plan(identity.organization_id, data.get("plan", ""), identity.actor, identity.role)
        return redirect_once_seen(own_writes, written.position, "/settings/plan")

    # --- API tokens ----------------------------------------------------------------------------------------
    @get("/tokens", name="settings:tokens", sync_to_thread=True)
    def tokens(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        owners_only(identity)
        return _page(
            "tokens", identity, tokens=read_models.api_tokens(identity.organization_id), issued=None, errors={}
        )

    @post("/tokens", name="settings:issue-token", sync_to_thread=True)
    def issue_token(
        self,
        data: Annotated[dict[str, str], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template:
        owners_only(identity)
        try:
            issued = verity.issue_token(
                identity.organization_id,
                data.get("name", ""),
                data.get("role", "member"),
                identity.actor,
                identity.role,
            )
        except SettingsInvalid as refused:
            tokens = read_models.api_tokens(identity.organization_id)
            return _page("tokens", identity, 422, tokens=tokens, issued=None, errors=refused.errors)
        own_writes.see(issued.position)
        tokens = read_models.api_tokens(identity.organization_id)
        return _page("tokens", identity, 201, tokens=tokens, issued=issued.text, errors={})

    @post("/tokens/{token_id:uuid}/revoke", name="settings:revoke-token", sync_to_thread=True)
    def revoke_token(self, token_id: UUID, verity: Verity, own_writes: OwnWritesDep, identity: Identity) -> Redirect:
        written = verity.revoke_token(identity.organization_id, token_id, identity.actor, identity.role)
        return redirect_once_seen(own_writes, written.position, "/settings/tokens")
