"""GET /api/events?after=N: the organization's events in store order, each with its position, type and time.

A client pages by passing the last position it read as `after`; `next_after` says where to continue.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec
from litestar import Controller, get
from litestar.params import Parameter

from app.shell.dependencies import ReadModelsDep
from app.shell.identity import Identity
from projections.rows import FeedEntry

MAX_PAGE = 1000
MAX_POSITION = 2**63 - 1  # positions are BIGINT: a larger `after` is refused (422), not sent to the database


class FeedPage(msgspec.Struct):
    events: list[FeedEntry]
    next_after: int  # pass as `after` to read on; equal to `after` when nothing new has come


class EventsApiController(Controller):
    path = "/events"
    tags: ClassVar[list[str]] = ["Events"]

    @get("/", name="api:events:feed", sync_to_thread=True)
    def feed(
        self,
        read_models: ReadModelsDep,
        identity: Identity,
        after: Annotated[
            int, Parameter(ge=0, le=MAX_POSITION, description="The last position already read (0 for the start).")
        ] = 0,
        limit: Annotated[int, Parameter(ge=1, le=MAX_PAGE, description="At most this many events.")] = 100,
    ) -> FeedPage:
        events = read_models.feed(identity.organization_id, after=after, limit=limit)
        return FeedPage(events=events, next_after=events[-1].position if events else after)
