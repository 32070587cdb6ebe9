"""What an experiment, a training loop and an evaluation share as the jobs move them through their states: the
status in words, whether they are live, the refusal of a step the state does not allow, and the failure a job
records.

A mixin placed before Aggregate. `fail` checks, then calls the aggregate's own `@event` method `_failed`, which only
assigns: the events stay declared on each aggregate (`Experiment.Failed`, ...), so their names in the store do not
change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from domain.errors import IllegalTransition


class Lifecycle:
    # provided by the aggregate: its states in words, its live states, the words refusing `fail` when it is not
    # live ({status} in them), its state and its @event method `_failed`
    status_names: ClassVar[Mapping[str, str]]
    live_states: ClassVar[tuple[str, ...]]
    fail_refusal: ClassVar[str]
    state: str
    _failed: Callable[..., None]

    @property
    def status(self) -> str:
        return self.status_names[self.state]

    @property
    def is_live(self) -> bool:
        return self.state in self.live_states

    def _require(self, states: tuple[str, ...], message: str) -> None:
        if self.state not in states:
            raise IllegalTransition(message.format(status=self.status))

    def fail(self, message: str, actor: dict[str, str]) -> None:
        self._require(self.live_states, self.fail_refusal)
        self._failed(message=message, actor=actor)
