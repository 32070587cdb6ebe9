"""The server's access log, with a live page's empty polls at debug level.

A page re-asks for its live parts every 2 s and most answers are 204 (nothing changed): at info they were a third
of the log and hid the requests people made. uvicorn writes one info record per request on "uvicorn.access"; this
filter turns a GET answered 204 into a debug record, kept only where that logger shows debug.

With VERITY_LOG_FORMAT=json every line of the web process, uvicorn's and ours, is a JSON object
(verity/log_format.py), with the request id of the request it was logged in.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from uvicorn.config import LOGGING_CONFIG

from verity.log_format import ContextFields, json_formatter, json_logs


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
    """uvicorn's own logging configuration, with the filter on its access logger, our loggers on its default
    handler, and JSON formatters where VERITY_LOG_FORMAT=json."""
    config = copy.deepcopy(LOGGING_CONFIG)
    filters = config.setdefault("filters", {})
    filters["empty_polls_at_debug"] = {"()": EmptyPollsAtDebug}
    filters["context_fields"] = {"()": ContextFields}
    config["loggers"]["uvicorn.access"]["filters"] = ["empty_polls_at_debug"]
    for handler in config["handlers"].values():
        handler["filters"] = ["context_fields"]
    # Without a handler on the root logger our own records below warning went nowhere, and those above came out
    # as bare text even in JSON.
    config["root"] = {"level": "INFO", "handlers": ["default"]}
    if json_logs():
        config["formatters"] = {name: json_formatter() for name in config["formatters"]}
    return config
