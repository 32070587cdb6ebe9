"""`{% kept key %}...{% endkept %}`: a piece of a page drawn once for its key, then reused, per process.

A live run's tables show rows that never change once written: a scored round, an event of its timeline, a prompt's
history as of the round that last drew it. Each new state of the run drew all the shown rows again (50 rounds, 100
events, 50 prompts: most of a part's time); now the first viewer of a state draws only the rows that are new. The
key must name everything the piece shows (a round's row: the run, the round, and whether it is the best one), and
the piece may use nothing of its viewer. After the fragment cache of Jinja's documentation (jinja2.ext).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from jinja2 import Environment, nodes
from jinja2.ext import Extension
from jinja2.parser import Parser
from markupsafe import Markup

from app.shell.kept import KeptByState

FRAGMENTS_KEPT = 10_000  # pieces of about 1 KB: some 10 MB at most


class _Pieces(KeptByState[Markup]):
    """Pieces drawn in a moment each: two viewers that draw one at once both draw it, rather than one waiting."""

    def get(self, key: Hashable, make: Callable[[], tuple[Markup, bool]]) -> Markup:
        piece = self.peek(key)
        if piece is not None:
            return piece
        piece, keep = make()
        if keep:
            self.put(key, piece)
        return piece


class KeptFragments(Extension):
    tags = frozenset({"kept"})

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        self.fragments = _Pieces(FRAGMENTS_KEPT)

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        key = parser.parse_expression()
        body = parser.parse_statements(("name:endkept",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_kept", [key]), [], [], body).set_lineno(lineno)

    def _kept(self, key: Hashable, caller: Callable[[], Any]) -> Markup:
        return self.fragments.get(key, lambda: (Markup(caller()), True))
