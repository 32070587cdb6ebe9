"""Your account: a person's own password, the organizations they belong to (and which one they act in), and
Sign out everywhere. Any role may do these, for their own account only; an API token has no account."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.auth.guard import OWN_ACCOUNT
from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.identity import Identity, session_of
from domain.application import Verity
from domain.errors import NotAllowed, NotFound, SettingsInvalid

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
NO_ACCOUNT = "This page is for a person signed in: an API token has no account."
NOT_A_MEMBER = "You are not a member of that organization."
PASSWORD_CHANGED = "Your password is changed. Every other session of yours is signed out."


def _account_id(identity: Identity) -> UUID:
    if identity.account_id is None:
        raise NotAllowed(NO_ACCOUNT)
    return identity.account_id


def _page(console: Console, status_code: int = 200, **context: Any) -> Template:
    account_id = _account_id(console.identity)
    organizations = [
        {"id": m.org_id, "name": console.verity.get_organization(m.org_id).name, "role": m.role}
        for m in console.read_models.memberships_of(account_id)
    ]
    base = {
        "identity": console.identity, "section": "account", "organizations": organizations, "errors": {}, "done": "",
    }
    return Template("account/account.html", context={**base, **context}, status_code=status_code)


class AccountController(ConsoleController):
    path = "/account"
    include_in_schema = False
    opt = {OWN_ACCOUNT: True}  # noqa: RUF012 (Litestar reads it as a class attribute)

    @get("/", name="account:page", sync_to_thread=True)
    def page(self, console: ConsoleDep) -> Template:
        return _page(console)

    @post("/password", name="account:password", sync_to_thread=True)
    def change_password(
        self, request: Request[Any, Any, Any], data: Annotated[dict[str, str], FORM], console: ConsoleDep
    ) -> Template:
        identity = console.identity
        account_id = _account_id(identity)
        try:
            written = console.verity.change_own_password(
                account_id,
                data.get("current_password", ""),
                data.get("new_password", ""),
                data.get("repeat_password", ""),
                identity.actor,
            )
        except SettingsInvalid as refused:
            return _page(console, 400, errors=refused.errors)
        console.own_writes.see(written.position)
        account = console.verity.get_account(account_id)
        request.set_session(session_of(account, identity.organization_id))  # this session goes on
        return _page(console, done=PASSWORD_CHANGED)

    @post("/organization", name="account:organization", sync_to_thread=True)
    def switch_organization(
        self, request: Request[Any, Any, Any], data: Annotated[dict[str, str], FORM], verity: Verity,
        identity: Identity,
    ) -> Redirect:
        """Act in another organization of yours: the session's organization changes, nothing else."""
        account_id = _account_id(identity)
        try:
            org_id = UUID(data.get("organization", ""))
            organization = verity.get_organization(org_id)
        except (ValueError, NotFound):
            raise NotFound(NOT_A_MEMBER) from None
        if organization.role_of(account_id) is None:
            raise NotFound(NOT_A_MEMBER)
        request.set_session(session_of(verity.get_account(account_id), org_id))
        return Redirect(path="/runs", status_code=303)

    @post("/sign-out-everywhere", name="account:sign-out-everywhere", sync_to_thread=True)
    def sign_out_everywhere(self, request: Request[Any, Any, Any], verity: Verity, identity: Identity) -> Redirect:
        verity.end_sessions(_account_id(identity), identity.actor)
        request.clear_session()
        return Redirect(path="/sign-in", status_code=303)
