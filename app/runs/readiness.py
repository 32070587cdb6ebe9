"""Launch readiness as the console asks it, before the launch is recorded: the jobs put their check on the app's
state (`verity serve` gives jobs/readiness.py's, which knows the worker in its own process); an app without one
checks nothing here, and a worker that can't train the run still fails it in words."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from litestar import Request

from app.shell.jobs import wait_until_sent
from domain.runs.settings import continue_changes

if TYPE_CHECKING:
    from app.shell.console import Console
    from app.shell.identity import Identity
    from domain.runs.run_settings import RunSettings
    from domain.written import Written

LAUNCH_READINESS = "launch_readiness"


def launch_problem(request: Request[Any, Any, Any], settings: RunSettings) -> str | None:
    """Why the worker that would train a run with these saved settings can't, in words; None when it can."""
    check = request.app.state.get(LAUNCH_READINESS)
    return check(settings) if check is not None else None


def launch_when_ready(
    command: Callable[..., Written],
    request: Request[Any, Any, Any],
    read_models: Any,
    identity: Identity,
    run_id: UUID,
) -> Written:
    """Launch or Retry a saved run (`command`: Verity.launch_run or Verity.retry_run) with its `launch_problem`,
    which the domain refuses in its words before anything is queued (none asked for a run not found: the command
    says so). The jobs send the run it queued (the same run, or Retry's new one) from the event log; the page
    waits until they have."""
    run = read_models.run(identity.organization_id, run_id)
    not_ready = launch_problem(request, run.run_settings) if run is not None else None
    written = command(identity.organization_id, run_id, identity.actor, identity.role, not_ready)
    wait_until_sent(request, written.position)
    return written


def continue_when_ready(request: Request[Any, Any, Any], console: Console, run_id: UUID,
                        values: Mapping[str, Any]) -> Written:
    """Continue from round N (the page's form or the API's body: optional Rounds and Time limit), refused as a
    launch is; a setting out of bounds is refused before anything is asked."""
    changes = continue_changes(values)

    def command(org_id: UUID, run_id: UUID, actor: Any, role: Any, not_ready: str | None) -> Written:
        return console.verity.continue_run(org_id, run_id, actor, role, changes, not_ready)

    return launch_when_ready(command, request, console.read_models, console.identity, run_id)
