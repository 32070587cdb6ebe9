"""A client (a script or an agent) saves, launches and follows an RL run through the JSON API."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

if TYPE_CHECKING:
    from conftest import Console


def test_a_run_saved_launched_and_trained_shows_in_the_list_timeline_and_feed(console: Console) -> None:
    saved = console.client.post("/api/runs", json=console.rl_body(rounds=3))
    assert saved.status_code == 201, saved.text
    run = saved.json()["run"]
    run_id = UUID(run["id"])
    assert run["state"] == "draft"
    assert run["status_line"] == "Draft"
    assert run["project_id"] == str(console.project_id)  # the organization's only project
    assert run["settings"]["training"]["rl"]["prompts_per_round"] == 64  # defaults filled in
    assert run["settings"]["training"]["advanced"]["learning_rate"] == 0.000005

    launched = console.client.post(f"/api/runs/{run_id}/launch")
    assert launched.status_code == 200, launched.text
    assert launched.json()["run"]["status_line"] == "Queued"
    assert console.launched == [run_id]

    console.verity.record_preparing(run_id)
    console.score_round(run_id, 0, None, 0.30)
    console.score_round(run_id, 1, 0.41, 0.47)
    console.score_round(run_id, 2, 0.45, 0.44)
    console.settle()

    listed = console.client.get("/api/runs").json()
    assert [row["id"] for row in listed] == [str(run_id)]
    assert listed[0]["status_line"] == "Training · round 3 / 3"  # rounds 1 and 2 done, round 3 in progress

    detail = console.client.get(f"/api/runs/{run_id}").json()
    assert detail["best_round"] == 1

    timeline = console.client.get(f"/api/runs/{run_id}/events").json()
    assert [entry["event_type"] for entry in timeline] == [
        "Saved",
        "Launched",
        "Preparing",
        "RoundScored",
        "RoundScored",
        "RoundScored",
    ]
    assert timeline[0]["actor_name"] == "owner@localhost"

    feed = console.client.get("/api/events", params={"after": 0}).json()
    positions = [event["position"] for event in feed["events"]]
    assert positions == sorted(positions)
    run_events = [event for event in feed["events"] if event["aggregate_id"] == str(run_id)]
    assert len(run_events) == 6
    assert all(event["time"] and event["type"] for event in run_events)
    assert feed["next_after"] == positions[-1]


def test_the_feed_pages_by_position(console: Console) -> None:
    for rounds in (1, 2, 3):
        assert console.client.post("/api/runs", json=console.rl_body(rounds=rounds)).status_code == 201
    console.settle()
    everything = console.client.get("/api/events", params={"after": 0, "limit": 1000}).json()["events"]
    first = console.client.get("/api/events", params={"after": 0, "limit": 2}).json()
    rest = console.client.get("/api/events", params={"after": first["next_after"], "limit": 1000}).json()
    assert first["events"] + rest["events"] == everything
    assert console.client.get("/api/events", params={"after": -1}).status_code == 400


def test_an_invalid_setting_is_refused_with_the_forms_words_and_records_nothing(console: Console) -> None:
    before = console.feed_position()
    refused = console.client.post("/api/runs", json=console.rl_body(rounds=0, answers_per_prompt=1))
    assert refused.status_code == 422
    assert refused.json() == {
        "errors": {
            "rounds": "Rounds must be a whole number from 1 to 1,000.",
            "answers_per_prompt": "Answers per prompt must be a whole number from 2 to 64.",
        }
    }
    wrong_method = console.client.post("/api/runs", json={"training": {"objective": "rl", "method": "full"}})
    assert wrong_method.status_code == 422
    assert wrong_method.json()["errors"]["method"] == ('RL trains a LoRA adapter: training.method must be "lora".')
    no_such_project = console.client.post("/api/runs", json={**console.rl_body(), "project": "Nope"})
    assert no_such_project.status_code == 422
    assert console.feed_position() == before


def test_commands_that_do_not_fit_are_refused_with_their_status(console: Console) -> None:
    run_id = console.client.post("/api/runs", json=console.rl_body()).json()["run"]["id"]
    assert console.client.post(f"/api/runs/{run_id}/cancel").status_code == 409  # a draft is not running
    assert console.client.post(f"/api/runs/{run_id}/retry").status_code == 409
    missing = console.client.get("/api/runs/00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "There is no such run in this organization."

    console.verity.set_plan(console.org_id, "free", console.verity_actor())
    refused = console.client.post(f"/api/runs/{run_id}/launch")
    assert refused.status_code == 403
    assert refused.json()["detail"] == (
        "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."
    )


def test_cancel_retry_and_duplicate_make_the_runs_the_documents_describe(console: Console) -> None:
    run_id = console.client.post("/api/runs", json=console.rl_body(rounds=5)).json()["run"]["id"]
    console.client.post(f"/api/runs/{run_id}/launch")
    cancelled = console.client.post(f"/api/runs/{run_id}/cancel").json()["run"]
    assert cancelled["status_line"] == "Cancelled"

    retried = console.client.post(f"/api/runs/{run_id}/retry")
    assert retried.status_code == 201
    new_run = retried.json()["run"]
    assert new_run["retry_of"] == run_id and new_run["status_line"] == "Queued"
    assert console.launched[-1] == UUID(new_run["id"])

    duplicate = console.client.post(f"/api/runs/{run_id}/duplicate").json()["run"]
    assert duplicate["status_line"] == "Draft"
    assert duplicate["duplicate_of"] == run_id
    assert duplicate["settings"]["training"]["rl"]["rounds"] == 5


def test_continue_takes_a_cancelled_run_on_from_its_last_round_as_the_same_run(console: Console) -> None:
    from domain.runs.progress import RoundResult

    run_id = console.client.post("/api/runs", json=console.rl_body(rounds=5)).json()["run"]["id"]
    console.client.post(f"/api/runs/{run_id}/launch")
    console.verity.record_preparing(UUID(run_id))
    for number in (0, 1, 2):  # the trainer's rounds, each with its checkpoint
        console.verity.record_round_scored(UUID(run_id), RoundResult(
            number, 0.4, reward=0.4 if number else None, signal=0.5, updated=bool(number),
            checkpoint_sha256=f"{number:02d}" * 32 if number else None,
        ))
    console.settle()
    assert console.client.get(f"/api/runs/{run_id}").json()["continues_from"] is None  # training: nothing to continue
    console.client.post(f"/api/runs/{run_id}/cancel")
    assert console.client.get(f"/api/runs/{run_id}").json()["continues_from"] == 2

    bad = console.client.post(f"/api/runs/{run_id}/continue", json={"rounds": 0, "time_limit_hours": "soon"})
    assert bad.status_code == 422
    assert bad.json()["errors"] == {"rounds": "Rounds must be a whole number from 1 to 1,000.",
                                    "time_limit_hours": "Time limit (hours) must be a number from 0.1 to 168."}
    launched = len(console.launched)
    continued = console.client.post(f"/api/runs/{run_id}/continue", json={"rounds": 8})
    assert continued.status_code == 200, continued.text
    run = continued.json()["run"]
    assert (run["id"], run["state"], run["rounds_total"], run["rounds_done"]) == (run_id, "queued", 8, 2)
    assert console.launched[launched:] == [UUID(run_id)]  # the jobs launch the same run again
    feed = console.client.get("/api/events", params={"after": 0, "limit": 1000}).json()["events"]
    told = [event for event in feed if event["type"] == "Run.Continued"]
    assert len(told) == 1 and told[0]["data"]["after_round"] == 2 and told[0]["data"]["changes"] == ["Rounds 5 → 8"]
    again = console.client.post(f"/api/runs/{run_id}/continue")
    assert again.status_code == 409
    assert again.json()["detail"] == ("Only a run stopped by its time limit or out of memory, or a cancelled run, "
                                      "can be continued: this run is Queued.")


def test_the_openapi_schema_documents_the_api(console: Console) -> None:
    schema = console.client.get("/api/schema/openapi.json").json()
    assert {
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/launch",
        "/api/runs/{run_id}/cancel",
        "/api/runs/{run_id}/retry",
        "/api/runs/{run_id}/continue",
        "/api/runs/{run_id}/duplicate",
        "/api/runs/{run_id}/events",
        "/api/events",
    } <= set(schema["paths"])
    assert not any(path.startswith("/runs") for path in schema["paths"])  # pages are not API


def test_another_organizations_runs_and_events_stay_out_of_sight(console: Console) -> None:
    from domain.runs.settings import run_body_from_api

    other_org = console.verity.create_organization("Elsewhere", "pro", console.verity_actor()).id
    other_project = console.verity.create_project(
        other_org, "Theirs", "some/model", None, False, console.verity_actor()
    ).id
    draft = run_body_from_api(console.rl_body())
    their_run = console.verity.save_run(other_org, other_project, draft, console.verity_actor()).id
    console.settle()

    assert console.client.get("/api/runs").json() == []
    assert console.client.get(f"/api/runs/{their_run}").status_code == 404
    assert console.client.post(f"/api/runs/{their_run}/launch").status_code == 404
    feed = console.client.get("/api/events", params={"after": 0, "limit": 1000}).json()["events"]
    assert all(event["aggregate_id"] not in (str(other_org), str(other_project), str(their_run)) for event in feed)
    assert feed  # the Default organization's own events are there
