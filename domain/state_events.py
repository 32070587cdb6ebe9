"""The `@event` methods that only move an aggregate to another state, made afresh for each aggregate's class body.

eventsourcing registers an `@event` method only on the class whose body declares it, and names the event after
that class (`Experiment.Stopped`): one declared on a shared base class would be stored under the base's name, and a
mixin's is not registered at all. So the shared method is made by a function and assigned in each aggregate's
class body, `_stopped = state_event("Stopped", STOPPED)`: each aggregate still declares its own event, with the
same name and fields as before, so its stored topic stays and old events replay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventsourcing.domain import event


def state_event(event_name: str, state: str) -> Callable[..., None]:
    """An `@event` method `(actor)` that records `event_name` and moves the aggregate to `state`."""

    @event(event_name)
    def moved(self: Any, actor: dict[str, str]) -> None:
        self.state = state

    return moved


def failed_event(state: str) -> Callable[..., None]:
    """The `@event` method `(message, actor)` that records "Failed": it keeps the message and moves to `state`."""

    @event("Failed")
    def failed(self: Any, message: str, actor: dict[str, str]) -> None:
        self.failure = message
        self.state = state

    return failed
