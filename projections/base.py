"""What every projection is: a named set of handlers, one per event type, applied inside the page's transaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from projections.tables import Tx


@dataclass(frozen=True)
class Event:
    """A decoded event of the log: its position, type ("Run.RoundScored"), aggregate, time and data."""

    position: int
    type: str
    aggregate_id: UUID
    version: int
    time: str
    data: dict[str, Any]

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
