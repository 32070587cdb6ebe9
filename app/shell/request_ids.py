"""Each HTTP request's id: in every record logged while it is answered, and in the answer's X-Request-ID header.

A proxy in front may send an X-Request-ID of its own, so its log and ours line up; it is taken only where it is a
short plain token, since it goes into every log line (a newline or a brace in it could forge a line). Pure ASGI,
not Litestar's middleware base: it must hold the id across the whole answer, uvicorn's access record included,
which uvicorn writes from inside the `send` of the answer's start.
"""

from __future__ import annotations

import re
from uuid import uuid4

from litestar.types import ASGIApp, Message, Receive, Scope, Send
from litestar.types.asgi_types import RawHeaders

from verity.log_format import REQUEST_ID

HEADER = "x-request-id"
_SANE = re.compile(r"[A-Za-z0-9._-]{1,64}")


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _with_id(message.get("headers") or [], request_id)
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)


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
