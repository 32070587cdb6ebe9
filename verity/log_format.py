"""Log lines as JSON objects where VERITY_LOG_FORMAT=json, with the request, organization and run they belong to.

A log collector reads one JSON object a line (time, level, logger, message, and request_id, org_id, run_id where
known) instead of parsing text; plain text stays the default, for people reading a terminal. The web process and the
worker share what is here: the context variables, the filter that copies them onto each record and the formatter.
The web process adds uvicorn's loggers (app/shell/access_log.py) and sets the request id per request
(app/shell/request_ids.py); jobs code binds a run with `bind_run`. Not under app/: the worker never imports the web
process.
"""

from __future__ import annotations

import logging
import logging.config
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS

REQUEST_ID: ContextVar[str | None] = ContextVar("verity_request_id", default=None)
ORG_ID: ContextVar[str | None] = ContextVar("verity_org_id", default=None)
RUN_ID: ContextVar[str | None] = ContextVar("verity_run_id", default=None)
_CONTEXT_FIELDS = {"request_id": REQUEST_ID, "org_id": ORG_ID, "run_id": RUN_ID}

# The worker's text format before JSON logs came: kept as the default.
PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def json_logs() -> bool:
    """Whether this process logs JSON objects (VERITY_LOG_FORMAT=json) rather than text."""
    return os.environ.get("VERITY_LOG_FORMAT", "").strip().lower() == "json"


@contextmanager
def bind_run(org_id: object, run_id: object) -> Iterator[None]:
    """Records logged inside carry org_id and run_id (as strings, since UUIDs are not JSON)."""
    org_token, run_token = ORG_ID.set(str(org_id)), RUN_ID.set(str(run_id))
    try:
        yield
    finally:
        RUN_ID.reset(run_token)
        ORG_ID.reset(org_token)


class ContextFields(logging.Filter):
    """Copies request_id, org_id and run_id onto a record where they are set; a value passed in `extra` wins.

    Put on handlers, not loggers: a logger's filter sees only the records logged on that very logger, a handler's
    sees those propagated from every logger below it as well."""

    def filter(self, record: logging.LogRecord) -> bool:
        for field, variable in _CONTEXT_FIELDS.items():
            value = variable.get()
            if value is not None:
                record.__dict__.setdefault(field, value)
        return True


def json_formatter() -> dict[str, Any]:
    """A dictConfig formatter: python-json-logger's, with the fields named as collectors expect them."""
    return {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": "%(levelname)s %(name)s %(message)s",
        "rename_fields": {"levelname": "level", "name": "logger"},
        "timestamp": "time",  # ISO 8601 in UTC
        # uvicorn's records carry the message again with terminal colours: noise in a collector.
        "reserved_attrs": [*RESERVED_ATTRS, "color_message"],
    }


def logging_config(json: bool) -> dict[str, Any]:
    """A dictConfig for a process with no web server: the root logger writes to stderr, as text or JSON."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context_fields": {"()": ContextFields}},
        "formatters": {"default": json_formatter() if json else {"format": PLAIN_FORMAT}},
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "default",
                "filters": ["context_fields"],
            }
        },
        "root": {"level": "INFO", "handlers": ["default"]},
    }


def configure_logging() -> None:
    """Set up this process's logging in the format VERITY_LOG_FORMAT chooses."""
    logging.config.dictConfig(logging_config(json_logs()))
