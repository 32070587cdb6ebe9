"""Every route of the app, taken from its own route table (a new route is walked the day it is added), asked by
an anonymous visitor, a viewer, a member and an owner of "Default", each trying the objects of "Other".

- Anonymous: every route but the public ones sends a page to sign-in (303) and answers an API call with 401.
- Signed in to Default: a route naming an object of Other answers 404 (a viewer's or member's change may be
  refused with 403 first: it names nothing), and no answer anywhere shows Other's run or member.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from litestar.routes import HTTPRoute

if TYPE_CHECKING:
    from conftest import Site

STRANGER_RUN = "the stranger's secret run"  # as tests/auth/conftest.py names Other's objects
STRANGER_EMAIL = "stranger@other.example"
# the probes and the scrape need no account (app/service/)
PUBLIC = re.compile(r"^/(static/|favicon\.ico$|api/schema|sign-in$|sign-out$|healthz$|readyz$|-/metrics$)")
ENDS_THE_SESSION = "/account/sign-out-everywhere"  # walked anonymously; tests/auth/test_account.py tests it signed in
PARAMETER = re.compile(r"\{(\w+)(?::\w+)?\}")


def every_route(site: Site) -> list[tuple[str, str, str]]:
    """(method, template, path with Other's ids) for every handler of every HTTP route."""
    walked = []
    for route in site.app.routes:  # type: ignore[attr-defined]
        if not isinstance(route, HTTPRoute):
            continue
        for method in sorted(route.route_handler_map):
            if method in ("OPTIONS", "HEAD"):
                continue
            path = PARAMETER.sub(lambda m: site.other_ids[m.group(1)], route.path)
            walked.append((method, route.path, path))
    return walked


def _missing(parameter: str) -> str:
    return "no-such-provider" if parameter == "provider" else "00000000-0000-4000-8000-000000000000"


def _ask(client, method: str, path: str):
    if method == "GET":
        return client.get(path, follow_redirects=False)
    headers = {"x-csrftoken": client.headers.get("x-csrftoken", "")}
    if path.startswith("/api/"):
        return client.request(method, path, json={}, headers=headers, follow_redirects=False)
    return client.request(method, path, data={}, headers=headers, follow_redirects=False)


def test_the_walk_covers_the_whole_route_table(site: Site) -> None:
    walked = {template for _, template, _ in every_route(site)}
    assert {"/runs/{run_id:uuid}", "/api/events", "/settings/tokens/{token_id:uuid}/revoke"} <= walked
    assert len(walked) >= 40


def test_an_anonymous_visitor_reaches_only_sign_in_static_files_and_the_probes(site: Site) -> None:
    client = site.client(None)
    client.get("/sign-in")  # a CSRF cookie, so what is tested is the sign-in check, not the CSRF one
    client.headers["x-csrftoken"] = client.cookies.get("csrftoken", "")
    for method, template, path in every_route(site):
        answer = _ask(client, method, path)
        if PUBLIC.match(template):
            assert answer.status_code < 500, (method, path, answer.status_code)
        elif path.startswith("/api/"):
            assert answer.status_code == 401, (method, path, answer.status_code, answer.text[:200])
        else:
            assert answer.status_code == 303, (method, path, answer.status_code)
            assert answer.headers["location"].startswith("/sign-in?next="), (method, path)


@pytest.mark.parametrize("role", ["viewer", "member", "owner"])
def test_nothing_of_another_organization_is_reachable(site: Site, role: str) -> None:
    client = site.client(role)
    for method, template, path in every_route(site):
        if PUBLIC.match(template) or template == ENDS_THE_SESSION:
            continue
        answer = _ask(client, method, path)
        assert answer.status_code < 500, (role, method, path, answer.status_code, answer.text[:300])
        assert STRANGER_RUN not in answer.text and STRANGER_EMAIL not in answer.text, (role, method, path)
        if "{" not in template:
            continue
        if method == "GET":
            assert answer.status_code == 404, (role, method, path, answer.status_code, answer.text[:200])
        elif answer.status_code != 404:
            # A change refused before any lookup (a viewer's, a member's owner-only one, a body that can't be
            # read) must answer exactly as it does for an object that doesn't exist: it reveals nothing.
            nowhere = _ask(client, method, PARAMETER.sub(lambda m: _missing(m.group(1)), template))
            assert 400 <= answer.status_code < 500, (role, method, path, answer.status_code)
            assert answer.status_code == nowhere.status_code, (role, method, path, answer.status_code)


def test_the_event_feed_shows_only_the_callers_organization(site: Site) -> None:
    client = site.token_client("viewer")
    site.settle()
    events = client.get("/api/events", params={"after": 0, "limit": 1000}).json()["events"]
    theirs = set(site.other_ids.values()) | {str(site.other_org_id)}
    assert events and not any(event["aggregate_id"] in theirs for event in events)
