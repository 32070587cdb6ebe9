"""Pages of the shell itself: the home address leads to Runs."""

from __future__ import annotations

from litestar import get
from litestar.response import Redirect


@get("/", name="shell:home", include_in_schema=False)
async def home() -> Redirect:
    return Redirect(path="/runs")
