"""JSON bodies with a bound on how deeply they nest, for every route of the app.

msgspec decodes arrays and objects recursively: a body of 100,000 `[` ends in a RecursionError (a 500), and one
nested a few hundred levels deep is decoded and handed to the commands. No request of the API nests more than a
handful of levels, so a body nested deeper than MAX_JSON_DEPTH is refused in words (400) before it is decoded:
no handler runs and nothing is recorded.

The check sits in the request class the app uses everywhere (Litestar reads every JSON body through
`Request.json()`), so a route added tomorrow is covered without doing anything.
"""

from __future__ import annotations

import re
from typing import Any

from litestar.exceptions import ClientException
from litestar.plugins.htmx import HTMXRequest

MAX_JSON_DEPTH = 64
TOO_DEEP = (
    f"The JSON body is nested more than {MAX_JSON_DEPTH} levels deep. Send at most {MAX_JSON_DEPTH} levels of "
    "arrays and objects inside one another."
)
# A string (skipped whole, brackets inside it included; one left open runs to the end) or a bracket.
_STRING_OR_BRACKET = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|$)|[\[\]{}]', re.DOTALL)
_OPENING = frozenset(b"[{")


def nested_deeper_than(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays and objects in `body` nest more than `limit` levels, read without decoding (and without
    recursion, whatever the depth).

    >>> nested_deeper_than(b'{"a": [1, {"b": "[[[["}]}', limit=3), nested_deeper_than(b"[[[[]]]]", limit=3)
    (False, True)
    """
    if body.count(b"[") + body.count(b"{") <= limit:  # the usual body: too few brackets to be that deep
        return False
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(body):
        first = token.group()[0]
        if first in _OPENING:
            depth += 1
            if depth > limit:
                return True
        elif first != ord('"'):
            depth -= 1
    return False


class BoundedJsonRequest(HTMXRequest):
    """The app's request: htmx's (`request.htmx`), whose JSON body is refused when nested too deeply."""

    __slots__ = ()

    async def json(self) -> Any:
        if nested_deeper_than(await self.body()):
            raise ClientException(detail=TOO_DEEP)
        return await super().json()
