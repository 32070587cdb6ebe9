"""`verity serve`: the console on one machine, over the event store and read models the settings choose."""

from __future__ import annotations

import logging
import logging.config
import os
import tempfile
from collections.abc import Callable

import uvicorn
from litestar import Litestar

from app.auth.config import AuthConfig
from app.evaluations.waiting import EMBEDDED_WORKER
from app.factory import create_app
from app.runs.readiness import LAUNCH_READINESS
from app.shell.access_log import log_config
from app.shell.jobs import JOBS, ConsoleJobs
from domain.application import Verity
from migrations import apply_migrations
from projections.runner import ProjectionRunner
from projections.store import ReadModels
from verity.config import Settings
from verity.first_owner import admin_email, ensure_first_owner, sign_in_words
from verity.secrets import secret_key
from verity.storage import open_storage
from verity.wiring import build_application, build_read_models, ensure_default_organization

log = logging.getLogger(__name__)


# The jobs, started beside the console and following the same event log (verity/cli.py passes jobs/'s: the app
# never imports jobs/, which reach the trainer). The console gives them nothing to call: it records commands, and
# reads from them launch readiness and how far they have sent (app/shell/jobs.py).
JobsStarter = Callable[[Settings, Verity, ReadModels], ConsoleJobs]


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000, jobs: JobsStarter | None = None,
          workers: int = 1, app_factory: str | None = None) -> None:
    """Migrate, make sure the Default organization and Demo project exist, follow the log, start the jobs
    (on the embedded default their worker runs in this process), and serve. With `workers` above 1, uvicorn's
    process manager runs that many web processes, each built by the import string `app_factory` (which calls
    `served_app`): each follows the log and sends the jobs' messages, taking turns (README: "Several processes")."""
    # uvicorn applies log_config() only once it runs: before that too, our records go where and as its go.
    logging.config.dictConfig(log_config())
    prepare(settings, host, port)
    if workers > 1:
        if not settings.broker_url:
            raise SeveralProcessesNeedABroker(
                "Several web processes need a broker (VERITY_BROKER_URL): on the embedded default the worker and "
                "its queue live in the one console process."
            )
        # every web process writes its request counts there, and a scrape of any of them sums them all
        os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="verity-metrics-"))
        uvicorn.run(app_factory, factory=True, workers=workers, host=host, port=port, log_level="info",
                    log_config=log_config())
        return
    app = served_app(settings, jobs)
    uvicorn.run(app, host=host, port=port, log_level="info", log_config=log_config())


class SeveralProcessesNeedABroker(Exception):
    """`verity serve --workers N` on the embedded default; the message says why, in words."""


def prepare(settings: Settings, host: str, port: int) -> None:
    """What runs once before any web process serves: the migrations, the Default organization, the first owner."""
    applied = apply_migrations(settings)
    if applied:
        log.info("Applied migrations: %s", ", ".join(applied))
    verity = build_application(settings)
    org_id, _ = ensure_default_organization(settings, verity, build_read_models(settings, migrate=False))
    password = ensure_first_owner(settings, verity, org_id)
    if password is not None:
        # print, not log: the password must reach the person starting the console and no log collector
        print(sign_in_words(admin_email(), password, settings, f"http://{host}:{port}"), flush=True)


def served_app(settings: Settings, jobs: JobsStarter | None = None) -> Litestar:
    """One web process's console: its application, read models and projection runner, its jobs (stopped when the
    app shuts down) and the app."""
    verity = build_application(settings)
    read_models = build_read_models(settings, migrate=False)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()  # catch up before the first request, so the Default organization is there to act in
    auth = AuthConfig(
        secret_key=secret_key(settings),
        # Secure cookies need https; the embedded default serves http on 127.0.0.1.
        secure_cookies=os.environ.get("VERITY_SECURE_COOKIES", "").strip().lower() in ("1", "true", "yes"),
        api_requests_per_minute=int(os.environ.get("VERITY_API_REQUESTS_PER_MINUTE", "600")),
        rate_limit_url=os.environ.get("VERITY_RATE_LIMIT_URL", "").strip() or None,
    )
    started = jobs(settings, verity, read_models) if jobs else None
    app = create_app(verity, read_models, runner=runner, storage=open_storage(settings), auth=auth)
    if started is not None:
        app.state[JOBS] = started
        app.state[LAUNCH_READINESS] = started.launch_problem  # what the worker can tell at Launch
        # No broker: the jobs' one worker runs in this process, so a page can say what Queued work waits for.
        app.state[EMBEDDED_WORKER] = started.embedded
        app.on_shutdown.append(started.stop)
    return app
