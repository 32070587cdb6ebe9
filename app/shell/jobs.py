"""What the console knows of its jobs. It records commands and nothing else: the jobs follow the event log and send
the work each recorded event asks for (jobs/dispatcher.py). `verity serve` puts the running jobs on the app's state
(a test puts its own); the app never imports jobs/, which reach the trainer.

A command that starts work (Launch, Retry, start_training, Merge model) waits a moment, after it is recorded,
until the jobs have sent it, so the page that follows shows it on its way, or why it could not go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from litestar import Request

if TYPE_CHECKING:
    from domain.runs.run_settings import RunSettings

JOBS = "jobs"
SENT_TIMEOUT = 5.0  # seconds; past it the page shows what is recorded, and the jobs send it when they can


class ConsoleJobs(Protocol):
    """jobs/service.py's JobsHandle, as the console sees it."""

    @property
    def embedded(self) -> bool:
        """The jobs' one worker runs in the console's process (the embedded default)."""
        ...

    def launch_problem(self, settings: RunSettings) -> str | None:
        """Why the worker that would train a run with these saved settings can't, in words; None when it can."""
        ...

    def wait_sent(self, position: int, timeout: float = SENT_TIMEOUT) -> bool:
        """Until the jobs have sent what the event log holds up to `position`; False at the timeout."""
        ...

    def ready_problem(self) -> str | None:
        """Why the jobs can't send work now (their broker does not answer), in words; None when they can."""
        ...

    def queue_states(self) -> list[Any]:
        """jobs/health.py's QueueState of each provider queue: queue, waiting, oldest_seconds, workers."""
        ...

    def stop(self) -> None: ...


def jobs_of(request: Request[Any, Any, Any]) -> ConsoleJobs | None:
    return request.app.state.get(JOBS)


def wait_until_sent(request: Request[Any, Any, Any], position: int) -> None:
    """After a command that starts work: until its message is sent (nothing to wait for without jobs)."""
    jobs = jobs_of(request)
    if jobs is not None:
        jobs.wait_sent(position, SENT_TIMEOUT)
