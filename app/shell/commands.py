"""After a command, wait until the read models show it, so the person who wrote sees their own write."""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from projections.store import ReadModels

# Called with a run's id once its launch is recorded; the jobs issue plugs Dramatiq in here.
Launcher = Callable[[UUID], None]

OWN_WRITE_TIMEOUT = 5.0


def see_own_write(read_models: ReadModels, position: int) -> None:
    # A timeout is not an error: the page renders what is there and its live parts catch up.
    read_models.wait_for(position, timeout=OWN_WRITE_TIMEOUT)
