"""After a command, wait until the read models show it, so the person who wrote sees their own write."""

from __future__ import annotations

from projections.runner import ProjectionRunner
from projections.store import ReadModels

PATIENCE = 1.0  # seconds to let the background runner apply a write before this request applies it itself
OWN_WRITE_TIMEOUT = 5.0


class OwnWrites:
    def __init__(self, read_models: ReadModels, runner: ProjectionRunner | None) -> None:
        self.read_models = read_models
        self.runner = runner

    def see(self, position: int) -> None:
        if self.read_models.wait_for(position, timeout=PATIENCE):
            return
        # The background runner can miss a wake-up (a subscription that began listening just after the write);
        # applying the pending events here is safe (the runner serialises its pages) and ends the wait.
        if self.runner is not None:
            self.runner.run_once()
        # A timeout is not an error: the page renders what is there and its live parts catch up.
        self.read_models.wait_for(position, timeout=OWN_WRITE_TIMEOUT)
