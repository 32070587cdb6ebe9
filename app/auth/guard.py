"""The app-wide guard: every route needs a signed-in person or a valid token unless it is marked public, and a
viewer changes nothing (a launch is refused by the domain, a form by its handler, each with its own words).
What each role may do is domain/access/roles.py's table; templates ask it through `identity.may(action)`."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler

from app.shell.identity import Identity, authenticate
from domain.access.roles import VIEWERS_READ_ONLY
from domain.errors import NotAllowed

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC = "public"  # opt key: the route answers anyone (sign-in, static files, the API schema)
READ_ONLY = "read_only"  # opt key: a POST that changes nothing (a form preview), open to viewers
ROLE_CHECKED_BY_DOMAIN = "role_checked_by_domain"  # opt key: the command checks the role and says why
OWN_ACCOUNT = "own_account"  # opt key: a person's own account (password, sessions), open to every role
# Routes of other rooms that are read-only or whose command checks the role itself, by route name.
READ_ONLY_ROUTES = frozenset({"runs:training-summary", "experiments:compute", "evaluations:settings"})
DOMAIN_CHECKED_ROUTES = frozenset({"runs:launch", "runs:retry", "api:runs:launch", "api:runs:retry"})
# Forms whose handler asks `identity.refusal(...)` first and, refused, shows the form again with what was typed and
# the refusal in words (a member made a viewer while typing keeps their work), rather than a bare 403 page.
FORM_CHECKED_ROUTES = frozenset({
    "runs:save", "runs:edit-save", "datasets:create", "datasets:upload", "metrics:register", "metrics:edit",
    "evaluations:create", "loops:create", "experiments:create", "probes:create",
})


def is_public(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> bool:
    return bool(handler.opt.get(PUBLIC)) or connection.url.path.startswith(("/static/", "/api/schema"))


async def signed_in(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    if is_public(connection, handler):
        return
    verity = connection.app.state["verity"]
    identity: Identity = await anyio.to_thread.run_sync(authenticate, connection, verity)
    connection.scope.setdefault("state", {})["identity"] = identity  # type: ignore[typeddict-unknown-key]
    if identity.role == "viewer" and connection.method not in SAFE_METHODS:
        name = handler.name or ""
        if handler.opt.get(READ_ONLY) or handler.opt.get(OWN_ACCOUNT) or name in READ_ONLY_ROUTES:
            return
        if handler.opt.get(ROLE_CHECKED_BY_DOMAIN) or name in DOMAIN_CHECKED_ROUTES or name in FORM_CHECKED_ROUTES:
            return
        raise NotAllowed(VIEWERS_READ_ONLY)
