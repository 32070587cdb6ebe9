"""`verity serve`: the console on one machine, over the event store and read models the settings choose."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import uvicorn

from app.auth.config import AuthConfig
from app.evaluations.waiting import EMBEDDED_WORKER
from app.factory import create_app
from app.runs.readiness import LAUNCH_READINESS
from app.shell.access_log import log_config
from migrations import apply_migrations
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.first_owner import admin_email, ensure_first_owner, sign_in_words
from verity.secrets import secret_key
from verity.storage import open_storage
from verity.wiring import build_application, build_read_models, ensure_default_organization

log = logging.getLogger(__name__)


# (settings, verity, read_models) -> (launcher, merger, stop[, evaluation_jobs[, launch_readiness]]): the jobs,
# started beside the console (verity/cli.py passes jobs/'s; the app never imports jobs/, which reach the trainer).
# evaluation_jobs, when given, sends new evaluations and loop steps (app/evaluations/sending.py reads it from the
# app's state); launch_readiness says why a run can't be trained here, before Launch queues it.
JobsStarter = Callable[[Settings, Any, Any], tuple[Any, ...]]


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000, jobs: JobsStarter | None = None) -> None:
    """Migrate, make sure the Default organization and Demo project exist, follow the log, start the jobs
    (on the embedded default their worker runs in this process), and serve."""
    applied = apply_migrations(settings)
    if applied:
        log.info("Applied migrations: %s", ", ".join(applied))
    verity = build_application(settings)
    read_models = build_read_models(settings, migrate=False)
    org_id, _ = ensure_default_organization(settings, verity, read_models)
    password = ensure_first_owner(settings, verity, org_id)
    if password is not None:
        # print, not log: the password must reach the person starting the console and no log collector
        print(sign_in_words(admin_email(), password, settings, f"http://{host}:{port}"), flush=True)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()  # catch up before the first request, so the Default organization is there to act in
    auth = AuthConfig(
        secret_key=secret_key(settings),
        # Secure cookies need https; the embedded default serves http on 127.0.0.1.
        secure_cookies=os.environ.get("VERITY_SECURE_COOKIES", "").strip().lower() in ("1", "true", "yes"),
    )
    started = jobs(settings, verity, read_models) if jobs else (None, None, lambda: None)
    launcher, merger, stop_jobs = started[:3]
    app = create_app(
        verity, read_models, runner=runner, storage=open_storage(settings), auth=auth, launcher=launcher, merger=merger
    )
    if len(started) > 3 and started[3] is not None:
        app.state["evaluation_jobs"] = started[3]
    if len(started) > 4 and started[4] is not None:  # what the worker can tell at Launch (app/runs/readiness.py)
        app.state[LAUNCH_READINESS] = started[4]
    # No broker: the jobs' one worker runs in this process, so a page can say what Queued work waits for.
    app.state[EMBEDDED_WORKER] = jobs is not None and settings.broker_url is None
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", log_config=log_config())
    finally:
        stop_jobs()
