"""VERITY_LOG_FORMAT=json: one JSON object a log line, with the request id (and a bound run) it was logged in; plain
text by default; a live page's empty polls at debug in both formats."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from uuid import uuid4

import pytest
from litestar import Litestar, Request, Response, get
from litestar.logging.config import LoggingConfig
from litestar.testing import TestClient
from log_lines import applied, json_lines

from app.shell.access_log import log_config
from app.shell.request_ids import around_the_router, request_id_of
from verity.log_format import bind_run, configure_logging, logging_config

LOGGER = "verity.tests.json_logs"
# Litestar configures the root logger when an app is made, unless told not to; its own logger (exceptions, in debug)
# then goes to the root's handler.
LITESTAR_LOGGING = LoggingConfig(
    configure_root_logger=False, loggers={"litestar": {"level": "INFO", "propagate": True}}
)


@get("/hello")
async def hello() -> str:
    logging.getLogger(LOGGER).info("hello from the handler")
    return "hello"


@get("/in-thread", sync_to_thread=True)
def in_thread() -> str:
    # Litestar runs a sync handler in a worker thread: the request id must follow it there.
    logging.getLogger(LOGGER).info("hello from a thread")
    return "hello"


@get("/answered")
async def answered() -> str:
    # uvicorn writes its access record from inside the answer's send, so in the request's context: as here.
    access(200)
    logging.getLogger("uvicorn.error").info("Started", extra={"color_message": "\x1b[1mStarted\x1b[0m"})
    return "ok"


class PageBroken(Exception):
    pass


@get("/broken")
async def broken() -> str:
    raise PageBroken


def error_page_that_fails(request: Request, error: PageBroken) -> Response:
    # An exception handler that raises: Litestar answers 500 from outside every route's middleware.
    logging.getLogger(LOGGER).error("the error page failed")
    raise RuntimeError("the error page failed")


def tiny_app() -> Litestar:
    # As app/factory.py builds the console: the logging stays as the process set it up (LITESTAR_LOGGING).
    return around_the_router(Litestar([hello, in_thread, answered, broken], logging_config=LITESTAR_LOGGING,
                                      exception_handlers={PageBroken: error_page_that_fails}))


def access(status: int) -> None:
    # As uvicorn writes its access record (uvicorn/protocols/http/httptools_impl.py)
    logging.getLogger("uvicorn.access").info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", "/runs/1/live",
                                             "1.1", status)


@pytest.fixture
def json_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERITY_LOG_FORMAT", "json")


@pytest.mark.usefixtures("json_format")
def test_a_record_logged_in_a_request_is_a_json_line_with_the_request_id() -> None:
    with applied(log_config()) as buffers, TestClient(tiny_app()) as client:
        answer = client.get("/hello", headers={"X-Request-ID": "edge-7f3a.b_2"})
        threaded = client.get("/in-thread", headers={"X-Request-ID": "edge-thread"})

    assert answer.headers["x-request-id"] == "edge-7f3a.b_2"
    assert threaded.headers["x-request-id"] == "edge-thread"
    lines = json_lines(buffers["default"])  # every line parses: one JSON object a line
    [record] = [line for line in lines if line["message"] == "hello from the handler"]
    assert record["request_id"] == "edge-7f3a.b_2"
    assert record["level"] == "INFO" and record["logger"] == LOGGER
    assert datetime.fromisoformat(record["time"]).tzinfo is not None
    [record] = [line for line in lines if line["message"] == "hello from a thread"]
    assert record["request_id"] == "edge-thread"


@pytest.mark.parametrize("offered", ["a b{", "x" * 200, ""])
@pytest.mark.usefixtures("json_format")
def test_an_unfit_request_id_is_replaced_by_a_fresh_one(offered: str) -> None:
    with applied(log_config()) as buffers, TestClient(tiny_app()) as client:
        answer = client.get("/hello", headers={"X-Request-ID": offered})

    given = answer.headers["x-request-id"]
    assert given != offered and len(given) == 32 and int(given, 16) >= 0
    [record] = [line for line in json_lines(buffers["default"]) if line["message"] == "hello from the handler"]
    assert record["request_id"] == given


def test_an_id_that_could_forge_a_log_line_is_not_taken() -> None:
    # A newline cannot travel through the test client's headers; the middleware reads the raw ASGI headers.
    forged = request_id_of({"type": "http", "headers": [(b"x-request-id", b'a b\n{"level": "ERROR"}')]})  # type: ignore[typeddict-item]
    fine = request_id_of({"type": "http", "headers": [(b"X-Request-ID", b"abc-1")]})  # type: ignore[typeddict-item]
    assert len(forged) == 32 and "\n" not in forged
    assert fine == "abc-1"


@pytest.mark.usefixtures("json_format")
def test_answers_made_before_any_route_carry_the_request_id_too() -> None:
    with applied(log_config()) as buffers, TestClient(tiny_app()) as client:
        unknown = client.get("/no-such-page", headers={"X-Request-ID": "edge-404"})
        wrong_method = client.post("/hello", headers={"X-Request-ID": "edge-405"})
        failed = client.get("/broken", headers={"X-Request-ID": "edge-500"})
        fresh = client.get("/no-such-page")

    assert (unknown.status_code, unknown.headers["x-request-id"]) == (404, "edge-404")
    assert (wrong_method.status_code, wrong_method.headers["x-request-id"]) == (405, "edge-405")
    assert (failed.status_code, failed.headers["x-request-id"]) == (500, "edge-500")
    assert len(fresh.headers["x-request-id"]) == 32
    lines = json_lines(buffers["default"])
    [record] = [line for line in lines if line["message"] == "the error page failed"]
    assert record["request_id"] == "edge-500"
    [record] = [line for line in lines if line["message"] == "GET /broken: the error page itself failed"]
    assert record["request_id"] == "edge-500" and record["level"] == "ERROR" and "RuntimeError" in record["exc_info"]


def test_the_console_s_not_found_and_wrong_method_answers_carry_the_request_id(sqlite_console) -> None:
    client = sqlite_console.client
    unknown = client.get("/no-such-page", headers={"X-Request-ID": "edge-404"})
    wrong_method = client.delete("/", headers={"X-Request-ID": "edge-405"})
    api_unknown = client.get("/api/no-such-thing")

    assert (unknown.status_code, unknown.headers["x-request-id"]) == (404, "edge-404")
    assert (wrong_method.status_code, wrong_method.headers["x-request-id"]) == (405, "edge-405")
    assert api_unknown.status_code == 404 and len(api_unknown.headers["x-request-id"]) == 32


def test_a_request_without_an_id_gets_one() -> None:
    with TestClient(tiny_app()) as client:
        first, second = client.get("/hello"), client.get("/hello")
    assert len(first.headers["x-request-id"]) == 32
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


@pytest.mark.usefixtures("json_format")
def test_bind_run_adds_the_organization_and_the_run() -> None:
    org_id, run_id = uuid4(), uuid4()
    with applied(logging_config(json=True)) as buffers:
        with bind_run(org_id, run_id):
            logging.getLogger("jobs.tests").info("training")
        logging.getLogger("jobs.tests").info("idle")

    training, idle = json_lines(buffers["default"])
    assert (training["org_id"], training["run_id"]) == (str(org_id), str(run_id))
    assert training["message"] == "training" and training["logger"] == "jobs.tests"
    assert "org_id" not in idle and "run_id" not in idle


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_an_empty_poll_is_at_debug_in_both_formats(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERITY_LOG_FORMAT", fmt)
    with applied(log_config()) as buffers:
        access(204)
        access(200)
        logging.getLogger("uvicorn.access").setLevel(logging.DEBUG)
        access(204)

    lines = buffers["access"].getvalue().splitlines()
    assert len(lines) == 2  # the first 204 was kept out at info
    if fmt == "json":
        shown, empty = (json.loads(line) for line in lines)
        assert shown["level"] == "INFO" and shown["logger"] == "uvicorn.access"
        assert shown["message"] == '127.0.0.1:5000 - "GET /runs/1/live HTTP/1.1" 200'
        assert empty["level"] == "DEBUG" and empty["message"].endswith(" 204")
    else:
        assert lines[0].startswith("INFO:") and lines[0].endswith(" 200 OK")
        assert lines[1].startswith("DEBUG:") and lines[1].endswith(" 204 No Content")


@pytest.mark.usefixtures("json_format")
def test_an_access_record_carries_the_request_id_and_uvicorn_s_colours_stay_out() -> None:
    with applied(log_config()) as buffers, TestClient(tiny_app()) as client:
        client.get("/answered", headers={"X-Request-ID": "req-1"})

    [record] = json_lines(buffers["access"])
    assert record["request_id"] == "req-1" and record["level"] == "INFO"
    [started] = [line for line in json_lines(buffers["default"]) if line["message"] == "Started"]
    assert started["logger"] == "uvicorn.error" and started["request_id"] == "req-1"
    assert "color_message" not in started


def test_plain_text_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VERITY_LOG_FORMAT", raising=False)
    with applied(log_config()) as buffers, TestClient(tiny_app()) as client:
        client.get("/hello", headers={"X-Request-ID": "req-2"})
        access(200)

    # the test client's httpx logs its own requests too
    assert "INFO:     hello from the handler" in buffers["default"].getvalue().splitlines()
    assert "req-2" not in buffers["default"].getvalue()
    assert not buffers["access"].getvalue().startswith("{")
    with applied(logging_config(json=False)) as buffers:
        logging.getLogger("jobs.tests").info("idle")
    assert buffers["default"].getvalue().rstrip("\n").endswith(" INFO jobs.tests idle")


def test_the_worker_s_logging_follows_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERITY_LOG_FORMAT", "json")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging()  # what `verity worker` calls: the root logger writes JSON to stderr
    try:
        [handler] = root.handlers
        record = logging.LogRecord("jobs.worker", logging.INFO, __file__, 1, "worker %s serves", ("w1",), None)
        assert json.loads(handler.format(record))["message"] == "worker w1 serves"
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
