"""The server's access log, with a live page's empty polls at debug level.

A page re-asks for its live parts every 2 s and most answers are 204 (nothing changed): at info they were a third
of the log and hid the requests people made. uvicorn writes one info record per request on "uvicorn.access"; this
filter turns a GET answered 204 into a debug record, kept only where that logger shows debug.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from uvicorn.config import LOGGING_CONFIG


class EmptyPollsAtDebug(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not _is_empty_poll(record):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def _is_empty_poll(record: logging.LogRecord) -> bool:
    # uvicorn's access record: '%s - "%s %s HTTP/%s" %d' % (client, method, path, http version, status)
    args = record.args
    return isinstance(args, tuple) and len(args) == 5 and args[1] == "GET" and args[4] == 204


def log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration, with the filter on its access logger."""
    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["empty_polls_at_debug"] = {"()": EmptyPollsAtDebug}
    config["loggers"]["uvicorn.access"]["filters"] = ["empty_polls_at_debug"]
    return config
