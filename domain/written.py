"""What every command of the application returns."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID


@dataclass(frozen=True)
class Written:
    """What a command saved: the aggregate's id and the log position of its last event."""

    id: UUID
    position: int
