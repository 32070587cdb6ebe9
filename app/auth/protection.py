"""CSRF for forms and htmx (a bearer-token API call is exempt: a browser never adds that header across sites),
and the security headers of every answer."""

from __future__ import annotations

from litestar.config.csrf import CSRFConfig
from litestar.datastructures import MutableScopeHeaders
from litestar.middleware.csrf import CSRFMiddleware
from litestar.types import Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",  # no inline script: behaviour lives in /static/*.js
        "style-src 'self' 'unsafe-inline'",  # htmx and plotly set style attributes while they draw
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
}


def csrf_config(secret: str, secure: bool) -> CSRFConfig:
    return CSRFConfig(
        secret=secret,
        cookie_secure=secure,
        cookie_samesite="lax",
        cookie_httponly=True,
        exclude_from_csrf_key="exclude_from_csrf",
    )


class BearerOrCsrfMiddleware(CSRFMiddleware):
    """Litestar's CSRF check, skipped for a request that proves itself with `Authorization: Bearer`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"authorization" and value[:7].lower() == b"bearer ":
                    await self.app(scope, receive, send)
                    return
        await super().__call__(scope, receive, send)


async def add_security_headers(message: Message, scope: Scope) -> None:
    """A `before_send` hook, so every answer gets them, errors and CSRF refusals included."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in SECURITY_HEADERS.items():
            headers[name] = value
