"""Each role is offered only the controls it may use, asked through one table (domain/access/roles.py via
`identity.may`), and a refusal keeps the person where they were: a form comes back with what was typed and the
refusal in words; a launch the plan refuses comes back on the run page with the plan's offer."""

from __future__ import annotations

import re
from html import unescape
from typing import TYPE_CHECKING

from consoles import PRO_PLAN_NEEDED, ROLE_NEEDED, VIEWERS_READ_ONLY

from app.auth.guard import FORM_CHECKED_ROUTES
from app.auth.testing import TESTS
from domain.runs.settings import run_body_from_api

if TYPE_CHECKING:
    from conftest import Site

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
DRAFT = {"name": "a draft", "training": {"objective": "rl", "rl": {"reward": MATH_PAIRS}}}
SOURCE = "def score(answer, reference):\n    return 1.0\n"
# Each form a viewer may fill but not send: its page, where it posts, and what the person typed.
FORMS = {
    "runs:save": ("/runs/new", "/runs", {"name": "typed by a viewer", "rounds": "7"}),
    "datasets:create": ("/datasets", "/datasets", {"name": "typed-by-a-viewer"}),
    "metrics:register": ("/metrics", "/metrics", {"name": "typed_by_a_viewer", "source": SOURCE}),
    "evaluations:create": ("/evaluations/new", "/evaluations/new", {"name": "typed by a viewer"}),
    "loops:create": ("/loops/new", "/loops/new", {"name": "typed by a viewer"}),
    "experiments:create": ("/experiments/new", "/experiments/new", {"name": "typed by a viewer"}),
}


def _page(client, path: str) -> str:
    answer = client.get(path)
    assert answer.status_code == 200, (path, answer.status_code)
    return unescape(answer.text)


def test_a_viewer_sees_the_create_controls_disabled_with_why_and_a_member_uses_them(site: Site) -> None:
    viewer, member = site.client("viewer"), site.client("member")
    for path, label in (("/runs", "Configure a run"), ("/evaluations", "New evaluation"),
                        ("/experiments", "New experiment"), ("/loops", "Start an automated loop")):
        shown = _page(viewer, path)
        assert re.search(rf'<span class="button button-primary disabled" aria-disabled="true">{label}</span>', shown)
        assert VIEWERS_READ_ONLY in shown and f">{label}</a>" not in shown, path
        assert f">{label}</a>" in _page(member, path) and VIEWERS_READ_ONLY not in _page(member, path), path
    for path, label in (("/datasets", "Create dataset"), ("/metrics", "Register metric"), ("/runs/new", "Save")):
        assert re.search(rf"<button type=\"submit\"[^>]*disabled[^>]*>{label}", _page(viewer, path)), path
        assert not re.search(rf"<button type=\"submit\"[^>]*disabled[^>]*>{label}", _page(member, path)), path


def test_a_viewer_sees_no_action_on_a_run_and_says_why(site: Site) -> None:
    run_id = site.verity.save_run(site.org_id, site.project_id, run_body_from_api(DRAFT), TESTS).id
    site.settle()
    shown = _page(site.client("viewer"), f"/runs/{run_id}")
    for control in (">Launch</button>", ">Duplicate</button>", ">Cancel run</button>", ">Retry</button>"):
        assert control not in shown, control
    assert ROLE_NEEDED in shown
    members = _page(site.client("member"), f"/runs/{run_id}")
    assert ">Launch</button>" in members and ">Duplicate</button>" in members and ROLE_NEEDED not in members


def test_a_refused_form_comes_back_with_what_was_typed_and_why_and_records_nothing(site: Site) -> None:
    assert set(FORMS) <= FORM_CHECKED_ROUTES
    viewer = site.client("viewer")
    before = site.verity.recorder.max_notification_id()
    for route, (_, action, typed) in FORMS.items():
        if route == "metrics:register":
            answer = viewer.post(action, files={key: (None, value) for key, value in typed.items()})
        else:
            answer = viewer.post(action, data=typed)
        shown = unescape(answer.text)
        assert answer.status_code == 403, (route, answer.status_code)
        assert VIEWERS_READ_ONLY in shown or ROLE_NEEDED in shown, route
        assert typed["name"] in shown, route  # what was typed is still there
        assert "<form" in shown and "Not allowed" not in shown, route  # the form, not the error page
    assert site.verity.recorder.max_notification_id() == before


def test_a_launch_the_plan_refuses_stays_on_the_run_page_with_the_plans_offer(site: Site) -> None:
    owner, member = site.client("owner"), site.client("member")
    owner.post("/settings/plan", data={"plan": "free"})
    run_id = site.verity.save_run(site.org_id, site.project_id, run_body_from_api(DRAFT), TESTS).id
    site.settle()
    refused = member.post(f"/runs/{run_id}/launch")
    shown = unescape(refused.text)
    assert refused.status_code == 403 and PRO_PLAN_NEEDED in shown and 'id="run-status"' in shown
    assert 'href="/settings/plan#plans">See plans</a>' in shown and ">Upgrade</a>" not in shown
    owners = unescape(owner.post(f"/runs/{run_id}/launch").text)
    assert PRO_PLAN_NEEDED in owners and 'href="/settings/plan">Upgrade</a>' in owners

