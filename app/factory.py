"""The app factory: the console and its JSON API over a Verity application and its read models.

It takes its infrastructure as arguments, so a test builds a small app over a store of its own, and the
server builds the real one from the wiring. It records commands and nothing else: the jobs follow the event log
and send the work each command starts (jobs/dispatcher.py); what the console may know of them is on the app's
state (app/shell/jobs.py).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from litestar import Litestar, Router
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import NotAuthorizedException, TooManyRequestsException
from litestar.logging.config import LoggingConfig
from litestar.middleware import DefineMiddleware
from litestar.middleware.rate_limit import RateLimitConfig
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin
from litestar.plugins.htmx import HTMXPlugin

from app import datasets, evaluations, experiments, loops, metrics, probes, rescorings, service
from app.agent import ConsoleTools, agent_endpoint, agent_lifespan, agent_server
from app.auth.account import AccountController
from app.auth.config import AuthConfig
from app.auth.connections import ConnectionsController
from app.auth.errors import sign_in_first, too_many
from app.auth.guard import signed_in
from app.auth.pages import sign_in, sign_in_page, sign_out
from app.auth.protection import BearerOrCsrfMiddleware, add_security_headers, csrf_config
from app.auth.rate_limits import (
    API_REQUESTS_PER_MINUTE,
    AccountSignInLimit,
    api_rate_limit,
    counter_for,
    shared_stores,
)
from app.auth.settings import SettingsController
from app.events.api import EventsApiController
from app.runs.actions import RunActionsController
from app.runs.api import RunsApiController
from app.runs.compare_pages import RunsCompareApiController, RunsComparePageController
from app.runs.editing import DraftsPageController
from app.runs.pages import RunsPageController
from app.service.prometheus import request_metrics
from app.shell.commands import OwnWrites
from app.shell.errors import API_ERROR_HANDLERS, PAGE_ERROR_HANDLERS
from app.shell.identity import identity_dependency
from app.shell.json_bodies import BoundedJsonRequest
from app.shell.pages import home
from app.shell.request_ids import around_the_router
from app.shell.static import favicon, plotly_js, static_files_router
from app.shell.templating import template_config
from domain.application import Verity
from projections.runner import ProjectionRunner
from projections.store import ReadModels
from verity.config import Settings
from verity.storage import open_storage

if TYPE_CHECKING:
    from verity.storage import FileStorage


AUTH_PAGES = [sign_in_page, sign_out, AccountController, SettingsController, ConnectionsController]


def _storage_or_configured(given: FileStorage | None) -> FileStorage:
    """The storage given, else the one the environment names, opened on first use: an app built without one still
    stores uploads where `verity serve` would, rather than failing the request."""
    return given if given is not None else open_storage(Settings.from_env())


def create_app(
    verity: Verity,
    read_models: ReadModels,
    *,
    runner: ProjectionRunner | None = None,
    storage: FileStorage | None = None,
    auth: AuthConfig | None = None,
    debug: bool = False,
) -> Litestar:
    """The console. When a `runner` is given, the app starts it on start-up and stops it on shutdown.

    `storage` is where runs write rollouts and adapters (the run page reads samples and adapters from it) and
    uploads their files; without one, the storage the environment configures (as `verity serve` opens it).
    Without jobs on its state (app/shell/jobs.py) a launch waits Queued and Merge model is refused.
    `auth` holds the secret key and cookie settings; without one, a random key lives as long as the app.
    """
    auth = auth or AuthConfig()
    own_writes = OwnWrites(read_models, runner)
    # the MCP server at /mcp: the same commands and read models as the JSON API, for an agent with an API token
    agent = agent_server(
        ConsoleTools(verity, read_models, own_writes, functools.cache(lambda: _storage_or_configured(storage)))
    )
    api = Router(
        path="/api",
        route_handlers=[RunsApiController, RunsCompareApiController, EventsApiController, *datasets.API_CONTROLLERS,
                       *metrics.API_CONTROLLERS, *evaluations.API_CONTROLLERS, *loops.API_CONTROLLERS,
                       *experiments.API_CONTROLLERS, *probes.API_CONTROLLERS,
                       *rescorings.API_CONTROLLERS],
        exception_handlers=API_ERROR_HANDLERS,
        middleware=[api_rate_limit(auth.api_requests_per_minute).middleware],
    )
    sign_in_rate = RateLimitConfig(
        rate_limit=("minute", auth.sign_in_attempts_per_minute), set_rate_limit_headers=False,
    )  # every request it sees is an attempt: it sits on the sign-in form's POST alone
    # Each rate limit sits on the routes it limits, not app-wide: app-wide, every request paid for both (a request
    # object built and asked whether it is limited) to be let through, about a fifth of a live page's 2 ms poll
    sign_in_attempts = Router(path="/", route_handlers=[sign_in], middleware=[sign_in_rate.middleware])
    pages = Router(
        path="/",
        route_handlers=[
            home, RunsPageController, RunsComparePageController, RunActionsController, DraftsPageController,
            *datasets.PAGE_CONTROLLERS, *metrics.PAGE_CONTROLLERS, *AUTH_PAGES, sign_in_attempts,
            *evaluations.PAGE_CONTROLLERS, *loops.PAGE_CONTROLLERS, *experiments.PAGE_CONTROLLERS,
            *probes.PAGE_CONTROLLERS, *rescorings.PAGE_CONTROLLERS,
        ],
        exception_handlers={**PAGE_ERROR_HANDLERS, NotAuthorizedException: sign_in_first},
    )
    sessions = CookieBackendConfig(
        secret=auth.session_secret, httponly=True, samesite="lax", secure=auth.secure_cookies,
        max_age=auth.session_days * 86_400,
    )
    account_limit = AccountSignInLimit(counter_for(auth.rate_limit_url), auth.account_sign_in_failures,
                                       auth.account_sign_in_window_seconds)
    # RequestIds goes around the router, not into `middleware`: Litestar runs those after routing, so a 404 or a 405
    # went out without an id (app/shell/request_ids.py)
    return around_the_router(Litestar(
        route_handlers=[api, pages, static_files_router(), plotly_js, favicon, agent_endpoint(agent, verity),
                        *service.ROUTES],
        dependencies={
            "verity": Provide(lambda: verity, use_cache=True, sync_to_thread=False),
            "read_models": Provide(lambda: read_models, use_cache=True, sync_to_thread=False),
            "own_writes": Provide(lambda: own_writes, use_cache=True, sync_to_thread=False),
            "storage": Provide(lambda: _storage_or_configured(storage), use_cache=True, sync_to_thread=False),
            "identity": Provide(identity_dependency),
            "auth": Provide(lambda: auth, use_cache=True, sync_to_thread=False),
            "sign_in_limit": Provide(lambda: account_limit, use_cache=True, sync_to_thread=False),
        },
        state=State({"verity": verity, API_REQUESTS_PER_MINUTE: auth.api_requests_per_minute}),
        guards=[signed_in],
        middleware=[
            sessions.middleware,
            DefineMiddleware(BearerOrCsrfMiddleware, config=csrf_config(auth.csrf_secret, auth.secure_cookies)),
            request_metrics().middleware,
        ],
        before_send=[add_security_headers],
        exception_handlers={TooManyRequestsException: too_many},
        stores=shared_stores(auth.rate_limit_url),
        plugins=[HTMXPlugin()],
        # the process's logging is verity/log_format.py's (plain or JSON): Litestar must not replace the root's
        logging_config=LoggingConfig(configure_root_logger=False,
                                     loggers={"litestar": {"level": "INFO", "propagate": True}}),
        request_class=BoundedJsonRequest,  # htmx's request, with a bound on how deeply a JSON body nests
        template_config=template_config(),
        openapi_config=OpenAPIConfig(
            title="Verity",
            version="0.1.0",
            description="Configure, launch and follow GRPO runs; read their audit timeline and event feed.",
            path="/api/schema",
            render_plugins=[JsonRenderPlugin()],  # /api/schema/openapi.json; no UI pulled from a CDN
        ),
        on_startup=[runner.start] if runner else [],
        lifespan=[agent_lifespan(agent)],
        on_shutdown=[runner.stop] if runner else [],
        debug=debug,
    ))
