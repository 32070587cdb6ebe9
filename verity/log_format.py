"""Log lines as JSON objects where VERITY_LOG_FORMAT=json, with the request, organization and run they belong to.

A log collector reads one JSON object a line (time, level, logger, message, and request_id, org_id, run_id where
known) instead of parsing text; plain text stays the default, for people reading a terminal. The web process and the
worker share what is here: the context variables, the filter that copies them onto each record and the formatter.
The web process adds uvicorn's loggers (app/shell/access_log.py) and sets the request id per request
(app/shell/request_ids.py); jobs code binds a run with `bind_run`. Not under app/: the worker never imports the web
process.

The trainer, a child process of the worker, logs the same way: the worker hands it the fields it has bound through
VERITY_LOG_CONTEXT (`context_for_child`), which its `configure_logging` puts on every record, and relays each of its
stderr lines into its own log, a JSON record with its level and fields (`child_record`), any other line as words.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS

REQUEST_ID: ContextVar[str | None] = ContextVar("verity_request_id", default=None)
ORG_ID: ContextVar[str | None] = ContextVar("verity_org_id", default=None)
RUN_ID: ContextVar[str | None] = ContextVar("verity_run_id", default=None)
_CONTEXT_FIELDS = {"request_id": REQUEST_ID, "org_id": ORG_ID, "run_id": RUN_ID}

# The worker's text format before JSON logs came: kept as the default.
PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
# What a parent process (the worker) had bound, for a child's records: {"org_id": ..., "run_id": ...} as JSON.
CHILD_CONTEXT = "VERITY_LOG_CONTEXT"
# A LogRecord's own attributes: a relayed record's fields of these names would clash with them.
_RECORD_ATTRIBUTES = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


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


def context_for_child() -> dict[str, str]:
    """Environment for a child process, so that its records carry the fields bound here (the run it trains)."""
    bound = {field: value for field, variable in _CONTEXT_FIELDS.items() if (value := variable.get()) is not None}
    return {CHILD_CONTEXT: json.dumps(bound)} if bound else {}


def inherited_context() -> dict[str, str]:
    """The fields a parent process handed this one (VERITY_LOG_CONTEXT); none where it handed none or garbage."""
    try:
        given = json.loads(os.environ.get(CHILD_CONTEXT) or "{}")
    except ValueError:
        return {}
    if not isinstance(given, dict):
        return {}
    return {field: str(value) for field, value in given.items() if field in _CONTEXT_FIELDS}


class ContextFields(logging.Filter):
    """Copies request_id, org_id and run_id onto a record where they are set; a value passed in `extra` wins, then
    what is bound in this context, then what the parent process handed down (`inherited`, for every thread).

    Put on handlers, not loggers: a logger's filter sees only the records logged on that very logger, a handler's
    sees those propagated from every logger below it as well."""

    def __init__(self, inherited: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.inherited = dict(inherited or {})

    def filter(self, record: logging.LogRecord) -> bool:
        for field, variable in _CONTEXT_FIELDS.items():
            value = variable.get()
            if value is None:
                value = self.inherited.get(field)
            if value is not None:
                record.__dict__.setdefault(field, value)
        return True


@dataclass(frozen=True)
class ChildRecord:
    """A record a child process logged as JSON, to log again in the parent: `message` names the child's logger and
    ends with its traceback; `fields` are its other fields (run_id, ...)."""

    level: int
    message: str
    fields: dict[str, Any]


def child_record(line: str) -> ChildRecord | None:
    """The record in a line of a child's stderr where the child logs JSON (`json_formatter`'s fields), else None:
    a traceback, a library's print, a line of text logs.

    >>> child_record('{"time": "2025-01-01T00:00:00+00:00", "level": "WARNING", "logger": "trainer.loop", '
    ...              '"message": "round 3 was slow", "run_id": "r1"}')
    ChildRecord(level=30, message='trainer.loop: round 3 was slow', fields={'run_id': 'r1'})
    >>> child_record("Traceback (most recent call last):") is None
    True
    """
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("message"), str):
        return None
    level = logging.getLevelName(str(data.get("level", "INFO")))
    message = f"{data.get('logger', 'child')}: {data['message']}"
    if isinstance(data.get("exc_info"), str):
        message = f"{message}\n{data['exc_info']}"
    fields = {key: value for key, value in data.items()
              if key not in _RECORD_ATTRIBUTES and key not in ("time", "level", "logger")}
    return ChildRecord(level if isinstance(level, int) else logging.INFO, message, fields)


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


def logging_config(json: bool, inherited: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A dictConfig for a process with no web server: the root logger writes to stderr, as text or JSON, with the
    fields a parent process handed down (`inherited`) on every record."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context_fields": {"()": ContextFields, "inherited": dict(inherited or {})}},
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
    """Set up this process's logging in the format VERITY_LOG_FORMAT chooses, with the fields VERITY_LOG_CONTEXT
    hands down (a trainer started by the worker: the run it trains)."""
    logging.config.dictConfig(logging_config(json_logs(), inherited_context()))
