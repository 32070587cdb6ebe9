"""Who is asking: a person signed in with a session cookie, or a script with an API token.

`authenticate` decides it once per request (the app-wide guard in app/auth/guard.py calls it and keeps the
answer on the request); `provide_identity` is the dependency handlers ask for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

import anyio
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException

from app.shell.kept import KeptByState
from domain.access import roles
from domain.access.tokens import sha256_of
from domain.actors import Actor
from domain.application import Verity
from domain.errors import NotFound

Role = Literal["owner", "member", "viewer"]
SIGN_IN_NEEDED = "Sign in to continue."
TOKEN_REFUSED = "This API token is unknown or revoked."


@dataclass(frozen=True)
class Identity:
    actor: Actor
    organization_id: UUID
    role: Role
    organization_name: str = ""
    plan: str = "pro"
    account_id: UUID | None = None  # the person's account; None for a token

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"

    @property
    def has_rl(self) -> bool:
        return self.plan == "pro"

    def may(self, action: str) -> bool:
        """Whether this identity's role may do `action` (domain/access/roles.py): templates ask
        `identity.may("change")` before they offer a control."""
        return roles.may(self.role, action)

    def refusal(self, action: str) -> str | None:
        """The words that refuse `action` to this identity's role, or None when it may."""
        return roles.refusal(self.role, action)


def bearer_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str | None:
    scheme, _, value = connection.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def authenticate(connection: ASGIConnection[Any, Any, Any, Any], verity: Verity) -> Identity:
    """The caller's identity, or NotAuthorizedException (401). A bearer token wins over a session cookie."""
    text = bearer_token(connection)
    if text is not None:  # kept by the token's digest: no secret is kept
        return _kept((id(verity), "token", sha256_of(text)), verity, lambda: _token_identity(verity, text))
    session = connection.scope.get("session") or {}
    try:
        account_id, org_id = UUID(session["account"]), UUID(session["org"])
    except (KeyError, TypeError, ValueError):
        raise NotAuthorizedException(SIGN_IN_NEEDED) from None
    return _kept((id(verity), account_id, org_id, session.get("gen", 0)), verity,
                 lambda: _session_identity(verity, account_id, org_id, session))


# An identity as last worked out, with the versions of the aggregates it was worked out from (a session's account and
# organization, a token and its organization): a request loads and replays them only when one has changed since (a
# new role or plan, a removal, a new password, a revoked token)
_identities: KeptByState[tuple[dict[UUID, int], Identity]] = KeptByState(4096)


def _kept(key: tuple[Any, ...], verity: Verity,
          work_out: Callable[[], tuple[dict[UUID, int], Identity]]) -> Identity:
    known = _identities.peek(key)
    if known is not None and not verity.changed_since(known[0]):
        return known[1]
    worked_out = work_out()
    _identities.put(key, worked_out)
    return worked_out[1]


def _token_identity(verity: Verity, text: str) -> tuple[dict[UUID, int], Identity]:
    token = verity.token_for(text)
    if token is None:
        raise NotAuthorizedException(TOKEN_REFUSED)
    organization = verity.get_organization(token.org_id)
    identity = Identity(
        actor=Actor("token", str(token.id), f"token {token.name}"),
        organization_id=token.org_id,
        role=token.role,
        organization_name=organization.name,
        plan=organization.plan,
    )
    return {token.id: token.version, token.org_id: organization.version}, identity


def _session_identity(verity: Verity, account_id: UUID, org_id: UUID,
                      session: dict[str, Any]) -> tuple[dict[UUID, int], Identity]:
    """The identity of a session, with the versions of its account and organization; NotAuthorizedException where
    the session no longer holds."""
    account = verity.get_account(account_id)
    if account is not None and session.get("gen", 0) != account.session_generation:
        raise NotAuthorizedException(SIGN_IN_NEEDED)  # the password changed, or Sign out everywhere, since
    try:
        organization = verity.get_organization(org_id)
    except NotFound:
        raise NotAuthorizedException(SIGN_IN_NEEDED) from None
    role = organization.role_of(account_id) if account is not None else None
    if role is None:  # removed from the organization since signing in
        raise NotAuthorizedException(SIGN_IN_NEEDED)
    identity = Identity(
        actor=Actor("person", account.email, account.email),
        organization_id=org_id,
        role=role,
        organization_name=organization.name,
        plan=organization.plan,
        account_id=account_id,
    )
    return {account_id: account.version, org_id: organization.version}, identity


def session_of(account: Any, org_id: UUID) -> dict[str, Any]:
    """What a session cookie holds: the account, the organization it acts in, and its session generation."""
    return {"account": str(account.id), "org": str(org_id), "gen": account.session_generation}


def provide_identity(request: ASGIConnection[Any, Any, Any, Any], verity: Verity) -> Identity:
    return _guards_answer(request) or authenticate(request, verity)


async def identity_dependency(request: ASGIConnection[Any, Any, Any, Any], verity: Verity) -> Identity:
    """`provide_identity` for the app's handlers: the guard's answer without a trip to a worker thread and back
    (every signed-in request); only a public route that asks for an identity authenticates, in a worker thread,
    since that reads the event store."""
    return _guards_answer(request) or await anyio.to_thread.run_sync(authenticate, request, verity)


def _guards_answer(request: ASGIConnection[Any, Any, Any, Any]) -> Identity | None:
    """The identity the app-wide guard (app/auth/guard.py) worked out and kept on the request, if it did."""
    known = request.scope.get("state", {}).get("identity")
    return known if isinstance(known, Identity) else None
