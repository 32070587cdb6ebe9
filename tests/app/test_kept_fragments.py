"""{% kept key %}: a piece of a page is drawn once for its key and reused; another key draws its own, and a key
that names what changed (a round that became the best) draws the piece again."""

from __future__ import annotations

from app.shell.kept import KeptByState
from app.shell.templating import template_config


def test_a_kept_piece_is_drawn_once_for_its_key_and_again_for_another() -> None:
    environment = template_config().instance.engine  # type: ignore[union-attr]
    template = environment.from_string(
        "{% for r in rows %}{% kept ('row', r.n, r.n == best) %}<tr>{{ r.n }}{{ draw() }}"
        "{% if r.n == best %} best{% endif %} {{ r.text }}</tr>{% endkept %}{% endfor %}")
    drawn: list[int] = []

    def draw() -> str:
        drawn.append(1)
        return ""

    rows = [{"n": 1, "text": "<b>"}, {"n": 2, "text": "b"}]
    first = template.render(rows=rows, best=1, draw=draw)
    assert first == "<tr>1 best &lt;b&gt;</tr><tr>2 b</tr>" and len(drawn) == 2  # escaped as before
    assert template.render(rows=rows, best=1, draw=draw) == first and len(drawn) == 2  # reused
    moved = template.render(rows=rows, best=2, draw=draw)
    assert moved == "<tr>1 &lt;b&gt;</tr><tr>2 best b</tr>" and len(drawn) == 4  # the key names the change
    KeptByState.forget_all()
    assert template.render(rows=rows, best=1, draw=draw) == first and len(drawn) == 6  # forgotten: drawn again
