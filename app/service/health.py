"""/healthz (the process answers) and /readyz (it can serve: the event store, the read models and the broker answer,
and the projections are not far behind the event log), for a load balancer or an orchestrator's probes.

Both answer anyone, as a probe has no account; they say nothing a stranger could use beyond up or down and why.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from litestar import Request, get
from litestar.response import Response

from app.auth.guard import PUBLIC
from app.shell.dependencies import ReadModelsDep
from app.shell.jobs import jobs_of
from domain.application import Verity

# How many events the read models may trail the event log by and still serve: a page shows what is a moment old,
# but a process whose projections stopped (or a rebuild under way) should take no traffic.
MAX_LAG_DEFAULT = 1000
CHECK_SECONDS = 3.0  # each check's limit: a load balancer's probe usually gives up after 5


def max_lag() -> int:
    return int(os.environ.get("VERITY_READY_MAX_LAG", MAX_LAG_DEFAULT))


@get("/healthz", name="service:healthz", opt={PUBLIC: True}, include_in_schema=False, sync_to_thread=False)
def healthz() -> dict[str, str]:
    return {"status": "up"}


@get("/readyz", name="service:readyz", opt={PUBLIC: True}, include_in_schema=False, sync_to_thread=True)
def readyz(request: Request[Any, Any, Any], verity: Verity, read_models: ReadModelsDep) -> Response[dict[str, Any]]:
    """200 with every check "ok", or 503 naming what does not answer."""
    checks: dict[str, str] = {}
    head = _check(checks, "event_store", lambda: verity.recorder.max_notification_id() or 0)
    reached = _check(checks, "read_models", read_models.position)
    lag = None
    if head is not None and reached is not None:
        lag = max(0, head - reached)
        limit = max_lag()
        checks["projections"] = "ok" if lag <= limit else f"{lag} events behind the event log (at most {limit})"
    jobs = jobs_of(request)
    if jobs is not None:
        problem = _check(checks, "broker", jobs.ready_problem)
        if problem is not None:
            checks["broker"] = problem
    ready = all(value == "ok" for value in checks.values())
    return Response({"ready": ready, "checks": checks, "projection_lag": lag}, status_code=200 if ready else 503)


def _check(checks: dict[str, str], name: str, probe: Any) -> Any:
    """The probe's answer, with `name` marked ok; None with the failure in words when it raised or did not answer
    within CHECK_SECONDS (a database that stopped answering can hold a connection attempt for minutes, and a
    probe must answer in time). The probe runs in a daemon thread of its own, left behind if it hangs."""
    answer: dict[str, Any] = {}

    def run() -> None:
        try:
            answer["value"] = probe()
        except Exception as problem:  # whatever fails, the probe's answer is "not ready" and why
            answer["problem"] = f"{type(problem).__name__}: {problem}".strip()[:300]

    thread = threading.Thread(target=run, name=f"readyz-{name}", daemon=True)
    thread.start()
    thread.join(CHECK_SECONDS)
    if thread.is_alive():
        checks[name] = f"no answer within {CHECK_SECONDS:g} seconds"
        return None
    if "problem" in answer:
        checks[name] = answer["problem"]
        return None
    checks[name] = "ok"
    return answer.get("value")
