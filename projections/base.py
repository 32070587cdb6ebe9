"""What every projection is: a named set of handlers, one per event type, applied inside the page's transaction.

Written once against `Tx` (memory or SQL); each projection's position in the log is saved in the same transaction
as its rows (projections/store.py), and projections/registry.py lists them in the order they apply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from domain.runs.run_settings import RunSettings
from projections.tables import Tx


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made a decoded event cost 1 us
# more to build (of the 50-60 a catch-up spends on each); the projections only read it.
@dataclass(slots=True)
class Event:
    """A decoded event of the log: its position, type ("Run.RoundScored"), aggregate, time and data."""

    position: int
    type: str
    aggregate_id: UUID
    version: int
    time: str
    data: dict[str, Any]
    # The aggregate's id as the tables key it (its text): made once, though several projections key each event
    aggregate_key: str = field(compare=False, repr=False)
    # True where the decoder read the data from JSON with no value that msgspec and json.dumps write differently
    # (no NaN or infinity, datetime or Decimal): the feed then writes it with msgspec (projections/feed.py)
    json_native: bool = field(default=False, compare=False, repr=False)

    @property
    def actor(self) -> dict[str, str]:
        return self.data.get("actor") or {"kind": "system", "id": "unknown", "name": "Unknown"}


Handler = Callable[[Tx, Event], None]


class Projection:
    name: str = ""
    handlers: dict[str, Handler]

    def apply(self, tx: Tx, event: Event) -> None:
        handler = self.handlers.get(event.type)
        if handler is not None:
            handler(tx, event)

    def handler_for(self, event_type: str) -> Handler | None:
        """What applies an event of this type (None: the projection skips it), looked up once per type of a page.
        A projection that overrides `apply` sees every event."""
        if type(self).apply is not Projection.apply:
            return self.apply
        return self.handlers.get(event_type)


# Values JSON takes as they are: by far the most of an event's data, so they skip the checks below.
PLAIN = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    """Event data as JSON takes it: UUIDs and datetimes as strings, tuples as lists, a run's settings as the API
    body, at any depth."""
    if type(value) in PLAIN:
        return value
    if isinstance(value, RunSettings):
        return jsonable(value.to_api())
    if isinstance(value, dict):
        return {
            k if type(k) is str else str(k): v if type(v) in PLAIN else jsonable(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value
