"""`verity serve`: the console on one machine, over the event store and read models the settings choose."""

from __future__ import annotations

import logging

import uvicorn

from app.factory import create_app
from migrations import apply_migrations
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

log = logging.getLogger(__name__)


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Migrate, make sure the Default organization and Demo project exist, follow the log, and serve."""
    applied = apply_migrations(settings)
    if applied:
        log.info("Applied migrations: %s", ", ".join(applied))
    verity = build_application(settings)
    read_models = build_read_models(settings, migrate=False)
    ensure_default_organization(settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()  # catch up before the first request, so the Default organization is there to act in
    app = create_app(verity, read_models, runner=runner)
    uvicorn.run(app, host=host, port=port, log_level="info")
