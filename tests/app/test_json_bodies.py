"""A script sends JSON nested absurdly deep to the API: every route that reads a JSON body answers 400 in words,
in the API's usual error shape, and nothing is recorded."""

from __future__ import annotations

import re

import pytest
from litestar.enums import RequestEncodingType
from litestar.routes import HTTPRoute

from app.auth.testing import bearer_headers
from app.shell.json_bodies import MAX_JSON_DEPTH, TOO_DEEP, nested_deeper_than

NOWHERE = "00000000-0000-4000-8000-000000000000"
PARAMETER = re.compile(r"\{(\w+)(?::\w+)?\}")
JSON = {"content-type": "application/json"}
FORMS = (RequestEncodingType.MULTI_PART, RequestEncodingType.URL_ENCODED)


def arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def objects(depth: int) -> str:
    return '{"a": ' * (depth - 1) + "{}" + "}" * (depth - 1)


def json_body_routes(app) -> list[tuple[str, str]]:
    """(method, path) of every /api route whose handler reads its `data` as JSON (not a multipart upload)."""
    found = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or not route.path.startswith("/api/"):
            continue
        for method, (handler, _) in route.route_handler_map.items():
            data = handler.parsed_fn_signature.parameters.get("data")
            if data is None or getattr(data.kwarg_definition, "media_type", None) in FORMS:
                continue
            found.append((method, PARAMETER.sub(NOWHERE, route.path)))
    return found


def test_every_json_route_refuses_a_body_nested_too_deeply_in_words_and_records_nothing(sqlite_console) -> None:
    console = sqlite_console
    client = console.client
    client.headers.update(bearer_headers(console.verity, console.org_id))
    routes = json_body_routes(client.app)
    assert {("POST", "/api/runs"), ("POST", "/api/datasets"), ("POST", "/api/evaluations"),
            ("POST", "/api/custom-metrics"), ("POST", "/api/loops"), ("POST", "/api/experiments")} <= set(routes)
    recorded = console.verity.recorder.max_notification_id()

    for method, path in routes:
        for body in (arrays(100_000), arrays(1000), objects(1000), arrays(MAX_JSON_DEPTH + 1)):
            answer = client.request(method, path, content=body, headers=JSON)
            assert answer.status_code == 400, (method, path, len(body), answer.status_code, answer.text[:300])
            assert answer.json() == {"status_code": 400, "detail": TOO_DEEP}, (method, path)

    assert console.verity.recorder.max_notification_id() == recorded
    assert "nested more than 64 levels deep" in TOO_DEEP


def test_a_body_nested_up_to_the_limit_reaches_the_route_as_before(sqlite_console) -> None:
    console = sqlite_console
    client = console.client
    client.headers.update(bearer_headers(console.verity, console.org_id))
    shallow = client.post("/api/runs", content=arrays(MAX_JSON_DEPTH), headers=JSON)
    assert shallow.status_code == 400 and "Expected `object`, got `array`" in shallow.text  # read, then refused
    deep_but_allowed = '{"name": "deep", "notes": ' + objects(MAX_JSON_DEPTH - 1) + "}"
    saved = client.post("/api/datasets", content=deep_but_allowed, headers=JSON)
    assert saved.status_code == 201, saved.text


@pytest.mark.parametrize(
    ("body", "deeper"),
    [
        (b'{"a": [1, 2, {"b": null}]}', False),
        (b"[[[[]]]]", False),  # four levels: as deep as allowed
        (b"[[[[[]]]]]", True),
        (b'[["[[[[[[", "\\"[[[[[[", {"]]]]": "{{{{{{{"}]]', False),  # brackets in strings, escaped quotes
        (b'[{"a": [{"b": [1]}]}]', True),
        (b"[" * 10 + b"]" * 10, True),
        (b'"[[[[[[[[[[', False),  # a string left open: malformed, for the decoder to refuse, not too deep
    ],
)
def test_depth_is_counted_over_arrays_and_objects_never_inside_strings(body: bytes, deeper: bool) -> None:
    assert nested_deeper_than(body, limit=4) is deeper
