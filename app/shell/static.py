"""Static files: our own CSS and JS, vendored htmx, and plotly.js served from the installed plotly package.

plotly.min.js (about 4.8 MB) is not committed: the `plotly` dependency ships it in its package data, so the
app serves that file itself and the browser never reaches a CDN.
"""

from __future__ import annotations

from pathlib import Path

import plotly
from litestar import Router, get
from litestar.datastructures import CacheControlHeader
from litestar.response import File
from litestar.static_files import create_static_files_router

from app.auth.guard import PUBLIC

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
_A_DAY = CacheControlHeader(max_age=86_400, public=True)


@get("/static/vendor/plotly.min.js", name="shell:plotly", include_in_schema=False, cache_control=_A_DAY)
async def plotly_js() -> File:
    return File(path=PLOTLY_JS, media_type="text/javascript", content_disposition_type="inline")


@get("/favicon.ico", name="shell:favicon", include_in_schema=False, cache_control=_A_DAY, opt={PUBLIC: True})
async def favicon() -> File:
    """The console's icon where a browser looks for it by itself: a page that names none (the JSON event feed, an
    API answer opened in a tab) has its icon asked for at /favicon.ico, which answered 404 (a console error)."""
    return File(path=STATIC_DIR / "favicon.svg", media_type="image/svg+xml", content_disposition_type="inline")


def static_files_router() -> Router:
    """Everything under app/static, at /static (named "static" for url_for_static_asset)."""
    return create_static_files_router(path="/static", directories=[STATIC_DIR], name="static")
