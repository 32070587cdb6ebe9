"""Cancel a probe in the console: its page offers Cancel while it is queued, the button cancels it and the page then
says who cancelled it, with its timeline in words; the API cancels too, refuses a viewer in the console's words, and
refuses an ended probe with its status. No jobs follow the log here, so the probe stays Queued until cancelled."""

from __future__ import annotations

from consoles import VIEWERS_READ_ONLY, ClientConsole, client_console

from app.auth.testing import bearer_headers, sign_in_as
from verity.config import Settings

PROBE = {"name": "numeric on math pairs", "source": {"kind": "math_pairs"},
         "reward": {"preset": "numeric", "metric": "numeric_accuracy"}, "prompts": 4, "answers_per_prompt": 2,
         "max_answer_tokens": 16}


def test_a_queued_probe_is_cancelled_from_its_page_which_says_who_cancelled_it(sqlite_settings: Settings) -> None:
    with client_console(sqlite_settings, ClientConsole) as console:
        answer = console.client.post("/api/probes", json=PROBE)
        assert answer.status_code == 201, answer.text
        probe_id = answer.json()["id"]
        page = console.client.get(f"/probes/{probe_id}").text
        assert 'data-status="queued"' in page and 'data-action="cancel"' in page
        assert "Probe “numeric on math pairs” saved by owner@localhost: 4 prompts × 2 answers." in page

        cancelled = console.client.post(f"/probes/{probe_id}/cancel", follow_redirects=False)
        assert cancelled.status_code == 303 and cancelled.headers["location"] == f"/probes/{probe_id}"

        page = console.client.get(f"/probes/{probe_id}").text
        assert 'data-status="cancelled"' in page and 'data-action="cancel"' not in page
        assert "Cancelled by owner@localhost: it records no score." in page
        assert "Cancelled by owner@localhost." in page  # the timeline's sentence
        shown = console.client.get(f"/api/probes/{probe_id}").json()["probe"]
        assert (shown["state"], shown["cancelled_by"], shown["live"]) == ("cancelled", "owner@localhost", False)

        again = console.client.post(f"/api/probes/{probe_id}/cancel")
        assert again.status_code == 409
        assert "Only a queued or sampling probe can be cancelled: this one is Cancelled." in again.text


def test_the_api_cancels_for_a_member_and_refuses_a_viewer(sqlite_settings: Settings) -> None:
    with client_console(sqlite_settings, ClientConsole) as console:
        probe_id = console.client.post("/api/probes", json=PROBE).json()["id"]
        viewer = bearer_headers(console.verity, console.org_id, role="viewer")
        refused = console.client.post(f"/api/probes/{probe_id}/cancel", headers=viewer)
        assert refused.status_code == 403 and VIEWERS_READ_ONLY in refused.text

        sign_in_as(console.client, console.verity, console.read_models, console.org_id, email="viewer@localhost",
                   role="viewer")
        page = console.client.get(f"/probes/{probe_id}").text
        assert 'data-status="queued"' in page and 'data-action="cancel"' not in page  # a viewer is offered no Cancel

        member = bearer_headers(console.verity, console.org_id, role="member", name="member")
        answer = console.client.post(f"/api/probes/{probe_id}/cancel", headers=member)
        assert answer.status_code == 200, answer.text
        console.settle(answer.json()["position"])
        shown = console.client.get(f"/api/probes/{probe_id}").json()["probe"]
        assert (shown["state"], shown["cancelled_by"]) == ("cancelled", "token member")
        timeline = console.client.get(f"/api/probes/{probe_id}").json()["timeline"]
        assert [(e["event_type"], e["sentence"]) for e in timeline] == [
            ("Saved", "Probe “numeric on math pairs” saved by owner@localhost: 4 prompts × 2 answers."),
            ("Cancelled", "Cancelled by token member."),
        ]
