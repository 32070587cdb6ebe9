"""What the runs API answers: the run as the read models show it, and the command's position in the log."""

from __future__ import annotations

from uuid import UUID

import msgspec

from projections.rows import RunDetail


class CommandAnswer(msgspec.Struct):
    """What a command wrote: the object's id and the feed position of its last event."""

    id: UUID
    position: int


class RunOut(msgspec.Struct):
    run: RunDetail
    command: CommandAnswer | None = None
