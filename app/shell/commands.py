"""After a command, wait until the read models show it, so the person who wrote sees their own write."""

from __future__ import annotations

from litestar.response import Redirect

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


def redirect_once_seen(own_writes: OwnWrites, position: int, path: str) -> Redirect:
    """A console write's answer: the page of what it made or changed (303), once the read models show the write,
    so that page does not show the state before it."""
    own_writes.see(position)
    return Redirect(path=path, status_code=303)
