"""What a page answers when nobody is signed in, or when sign-in is tried too often."""

from __future__ import annotations

from urllib.parse import quote

from litestar import Request, Response
from litestar.exceptions import NotAuthorizedException, TooManyRequestsException
from litestar.response import Redirect, Template

from app.auth.pages import TOO_MANY
from app.auth.rate_limits import API_REQUESTS_PER_MINUTE, api_refusal


def sign_in_first(request: Request, _: NotAuthorizedException) -> Response:
    target = f"/sign-in?next={quote(request.url.path)}"
    if request.headers.get("hx-request"):
        # htmx follows HX-Redirect with a full page load; a 303 would be swapped into the part.
        return Response(content="", status_code=401, headers={"HX-Redirect": target})
    return Redirect(path=target, status_code=303)


def too_many(request: Request, refusal: TooManyRequestsException) -> Template | Response:
    """An API call over its token's limit answers JSON in words; a sign-in from one address too often, the page."""
    if request.url.path.startswith("/api/"):
        per_minute = request.app.state.get(API_REQUESTS_PER_MINUTE, 0)
        return Response({"detail": api_refusal(per_minute)}, status_code=429, headers=refusal.headers or None)
    context = {"next": "/runs", "email": "", "error": TOO_MANY, "section": ""}
    return Template("auth/sign_in.html", context=context, status_code=429)
