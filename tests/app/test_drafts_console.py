"""A draft edited and deleted through the console and the API: only a draft, only by roles that may save runs,
refused in words otherwise; the Runs list, the run page and the feed follow."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from app.auth.testing import bearer_headers
from domain.access.roles import VIEWERS_READ_ONLY

if TYPE_CHECKING:
    from conftest import Console


def test_the_api_edits_a_draft_in_place_and_deletes_it_from_the_list(console: Console) -> None:
    run_id = console.client.post("/api/runs", json=console.rl_body(rounds=3)).json()["run"]["id"]
    edited = console.client.put(f"/api/runs/{run_id}", json={**console.rl_body(rounds=5), "name": "renamed"})
    assert edited.status_code == 200, edited.text
    assert (edited.json()["run"]["id"], edited.json()["run"]["rounds_total"]) == (run_id, 5)
    assert edited.json()["run"]["name"] == "renamed"

    deleted = console.client.delete(f"/api/runs/{run_id}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["run"]["state"] == "deleted"
    assert run_id not in [run["id"] for run in console.client.get("/api/runs").json()]
    assert f"/runs/{run_id}" not in console.client.get("/runs").text
    page = console.client.get(f"/runs/{run_id}")  # its page and timeline stay, for the audit
    assert page.status_code == 200 and "badge-deleted" in page.text and 'id="edit-draft"' not in page.text
    assert "deleted the draft “renamed”" in html.unescape(console.client.get(f"/runs/{run_id}/timeline").text)
    feed = console.client.get("/api/events", params={"after": 0, "limit": 1000}).json()["events"]
    assert [e["type"] for e in feed if e["aggregate_id"] == run_id] == ["Run.Saved", "Run.Edited", "Run.Deleted"]
    again = console.client.delete(f"/api/runs/{run_id}")
    assert again.status_code == 409
    assert again.json()["detail"].startswith("Only a draft can be deleted: this run is Deleted")


def test_a_launched_run_is_neither_edited_nor_deleted_and_says_why(console: Console) -> None:
    run_id = console.client.post("/api/runs", json=console.rl_body()).json()["run"]["id"]
    assert console.client.post(f"/api/runs/{run_id}/launch").status_code == 200
    refused = console.client.put(f"/api/runs/{run_id}", json=console.rl_body(rounds=2))
    assert refused.status_code == 409
    assert refused.json()["detail"] == "Only a draft can be edited: this run is Queued. Duplicate it to change it."
    assert console.client.delete(f"/api/runs/{run_id}").json()["detail"] == (
        "Only a draft can be deleted: this run is Queued, and its history stays on the Runs list.")
    page = console.client.get(f"/runs/{run_id}/edit")
    assert page.status_code == 409 and "Only a draft can be edited: this run is Queued." in page.text
    assert 'id="edit-draft"' not in console.client.get(f"/runs/{run_id}").text


def test_a_viewer_may_neither_edit_nor_delete_a_draft(console: Console) -> None:
    run_id = console.client.post("/api/runs", json=console.rl_body()).json()["run"]["id"]
    viewer = bearer_headers(console.verity, console.org_id, role="viewer")
    for answer in (
        console.client.put(f"/api/runs/{run_id}", json=console.rl_body(rounds=2), headers=viewer),
        console.client.delete(f"/api/runs/{run_id}", headers=viewer),
    ):
        assert answer.status_code == 403 and answer.json()["detail"] == VIEWERS_READ_ONLY
    console.settle()
    assert console.client.get(f"/api/runs/{run_id}").json()["state"] == "draft"


def test_the_edit_form_saves_into_the_same_draft(console: Console) -> None:
    run_id = console.client.post("/api/runs", json=console.rl_body(rounds=3)).json()["run"]["id"]
    page = console.client.get(f"/runs/{run_id}")
    assert f'href="/runs/{run_id}/edit"' in page.text and f'action="/runs/{run_id}/delete"' in page.text
    form = html.unescape(console.client.get(f"/runs/{run_id}/edit").text)
    assert f'action="/runs/{run_id}/edit"' in form and 'name="rounds" value="3"' in form
    values = {"name": "math pairs", "kind": "full", "project": str(console.project_id), "rounds": "4",
              "reward_preset": "verifiable", "reward_metric": "math_pairs", "reward_format_bonus": "on"}
    saved = console.client.post(f"/runs/{run_id}/edit", data=values, follow_redirects=False)
    assert (saved.status_code, saved.headers["location"]) == (303, f"/runs/{run_id}")
    assert console.client.get(f"/api/runs/{run_id}").json()["rounds_total"] == 4
    gone = console.client.post(f"/runs/{run_id}/delete", follow_redirects=False)
    assert (gone.status_code, gone.headers["location"]) == (303, "/runs")
