"""Launch readiness as the console asks it: the jobs put their check on the app's state (`verity serve` gives
jobs/readiness.py's, which knows the worker in its own process); an app without one checks nothing here, and a
worker that can't train the run still fails it in words."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from litestar import Request

LAUNCH_READINESS = "launch_readiness"


def launch_problem(request: Request[Any, Any, Any], settings: dict[str, Any]) -> str | None:
    """Why the worker that would train a run with these saved settings can't, in words; None when it can."""
    check = request.app.state.get(LAUNCH_READINESS)
    return check(settings) if check is not None else None


def run_launch_problem(request: Request[Any, Any, Any], read_models: Any, org_id: UUID, run_id: UUID) -> str | None:
    """`launch_problem` for a saved run (None for a run not found: the command says so)."""
    run = read_models.run(org_id, run_id)
    return launch_problem(request, run.settings) if run is not None else None
