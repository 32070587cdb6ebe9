"""Each HTTP request's id: in every record logged while it is answered, and in the answer's X-Request-ID header.

A proxy in front may send an X-Request-ID of its own, so its log and ours line up; it is taken only where it is a
short plain token, since it goes into every log line (a newline or a brace in it could forge a line). Pure ASGI,
not Litestar's middleware base: it must hold the id across the whole answer, uvicorn's access record included,
which uvicorn writes from inside the `send` of the answer's start.

It goes around the whole application (`around_the_router`), not into Litestar's `middleware=[...]`: Litestar runs
those inside each route, after routing, so a 404 for an unknown path, a 405, and an error an exception handler raised
were answered and logged outside them, with no id. An error that gets past Litestar's last exception handling (an
exception handler that raised) is logged and answered 500 here, while the id is still set: left to uvicorn, its
record and its 500 would come after the request's id was gone.
"""

from __future__ import annotations

import logging
import re
from typing import cast
from uuid import uuid4

from litestar import Litestar
from litestar.types import ASGIApp, HTTPScope, Message, Receive, Scope, Send
from litestar.types.asgi_types import RawHeaders

from verity.log_format import REQUEST_ID

HEADER = "x-request-id"
_SANE = re.compile(r"[A-Za-z0-9._-]{1,64}")

log = logging.getLogger(__name__)


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope)
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = _with_id(message.get("headers") or [], request_id)
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            if started:  # too late for another answer: the server closes the connection
                raise
            http = cast("HTTPScope", scope)
            log.exception("%s %s: the error page itself failed", http["method"], http["path"])
            await _internal_server_error(send_with_id)
        finally:
            REQUEST_ID.reset(token)


async def _internal_server_error(send: Send) -> None:
    await send({"type": "http.response.start", "status": 500,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": b"Internal Server Error", "more_body": False})


def around_the_router(app: Litestar) -> Litestar:
    """`app` with RequestIds around its ASGI handler: its router inside its app-wide exception handling, the layer
    every HTTP request goes through, before routing and after the last exception handler."""
    app.asgi_handler = RequestIds(app.asgi_handler)
    return app


def request_id_of(scope: Scope) -> str:
    """The id the request came with where it is a sane token, else a new one."""
    for name, value in scope.get("headers", []):
        if name.lower() == HEADER.encode():
            offered = value.decode("latin-1")
            return offered if _SANE.fullmatch(offered) else uuid4().hex
    return uuid4().hex


def _with_id(headers: RawHeaders, request_id: str) -> list[tuple[bytes, bytes]]:
    # The answer's own X-Request-ID, if a handler set one, gives way: the header says which log lines are its.
    kept = [(name, value) for name, value in headers if name.lower() != HEADER.encode()]
    return [*kept, (HEADER.encode(), request_id.encode())]
