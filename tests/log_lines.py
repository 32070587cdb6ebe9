"""Log lines as a test reads them: a logging configuration applied with each handler writing to a buffer, and a
buffer's JSON lines (tests/conftest.py puts this folder on sys.path)."""

from __future__ import annotations

import io
import json
import logging
import logging.config
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def applied(config: dict[str, Any]) -> Iterator[dict[str, io.StringIO]]:
    """Apply a logging config with each handler writing to its own buffer, then put every logger back as it was,
    so that other tests (and pytest's own capture) see the logging they had."""
    buffers = {name: io.StringIO() for name in config["handlers"]}
    for name, handler in config["handlers"].items():
        handler["stream"] = buffers[name]
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                      if isinstance(lg, logging.Logger))]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate, lg.filters[:], lg.disabled) for lg in loggers]
    try:
        logging.config.dictConfig(config)
        yield buffers
    finally:
        for lg, handlers, level, propagate, filters, disabled in saved:
            lg.handlers[:], lg.filters[:] = handlers, filters
            lg.level, lg.propagate, lg.disabled = level, propagate, disabled


def json_lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]
