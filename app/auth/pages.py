"""Sign in and sign out. A session is a signed, encrypted, HTTP-only cookie holding the account, the
organization it acts in and the account's session generation (app/shell/identity.py); nothing else about the
person is kept in it."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, Dependency
from litestar.response import Redirect, Template

from app.auth.guard import PUBLIC
from app.auth.rate_limits import AccountSignInLimit
from app.shell.dependencies import ReadModelsDep
from app.shell.identity import session_of
from domain.application import Verity

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
WRONG_PASSWORD = "The email or password is not right."
NO_ORGANIZATION = "Your account belongs to no organization yet. Ask an owner to add you."
TOO_MANY = "Too many sign-in attempts. Wait a minute, then try again."


def _safe_next(target: str | None) -> str:
    """Only a path on this site (never //host or a scheme), so sign-in can't be used to redirect elsewhere."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/runs"


@get("/sign-in", name="auth:sign-in", opt={PUBLIC: True}, include_in_schema=False)
async def sign_in_page(next: str | None = None) -> Template:
    return Template("auth/sign_in.html", context={"next": _safe_next(next), "email": "", "error": "", "section": ""})


@post("/sign-in", name="auth:sign-in-submit", opt={PUBLIC: True}, include_in_schema=False, sync_to_thread=True)
def sign_in(
    request: Request[Any, Any, Any],
    data: Annotated[dict[str, str], FORM],
    verity: Verity,
    read_models: ReadModelsDep,
    sign_in_limit: Annotated[AccountSignInLimit, Dependency(skip_validation=True)],
) -> Template | Redirect:
    email, target = data.get("email", "").strip(), _safe_next(data.get("next"))
    if sign_in_limit.refused(email):  # refused before the password is even checked: no more guesses for now
        context = {"next": target, "email": email, "error": sign_in_limit.words, "section": ""}
        return Template("auth/sign_in.html", context=context, status_code=429)
    account = verity.check_password(email, data.get("password", ""))
    if account is None:
        sign_in_limit.failed(email)
    else:
        sign_in_limit.succeeded(email)
    error = WRONG_PASSWORD if account is None else ""
    memberships = read_models.memberships_of(account.id) if account is not None else []
    if account is not None and not memberships:
        error = NO_ORGANIZATION
    if error:
        context = {"next": target, "email": email, "error": error, "section": ""}
        return Template("auth/sign_in.html", context=context, status_code=400)
    request.set_session(session_of(account, memberships[0].org_id))
    return Redirect(path=target, status_code=303)


@post("/sign-out", name="auth:sign-out", opt={PUBLIC: True}, include_in_schema=False)
async def sign_out(request: Request[Any, Any, Any]) -> Redirect:
    request.clear_session()
    return Redirect(path="/sign-in", status_code=303)
