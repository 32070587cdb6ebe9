"""From an agent (000: "An agent starts RL with start_training ... and always takes the baseline's main metric as
the reward"): an agent with an organization's API token trains through the console's MCP server, over streamable
HTTP and over `verity mcp` on stdio, with the SDK's own client, and is refused in the console's words."""

from __future__ import annotations

import html
import time
from typing import Any

import anyio
import httpx
import pytest
from agent_console import ENDED, Console, answer, refusal
from mcp import Client

from domain.access.roles import ROLE_NEEDED, VIEWERS_READ_ONLY

pytestmark = pytest.mark.slow
TOOLS = {"start_training", "list_projects", "list_dataset_versions", "list_baselines", "list_runs", "run_status",
         "run_rounds", "run_ending", "run_samples", "cancel_run", "score_against_baseline", "evaluation_result"}
TINY = {"prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16}
PRO_PLAN_NEEDED = "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."


async def _until_ended(agent: Client, run_id: str, timeout: float = 240) -> dict[str, Any]:
    """Follow a run as an agent does, through the read tools, until run_ending says it ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = answer(await agent.call_tool("run_status", {"run_id": run_id}))
        ending = answer(await agent.call_tool("run_ending", {"run_id": run_id}))
        if ending["ended"] and (ending["state"] != "adapter_ready" or ending["stop_reason"]):
            return ending
        assert status["state"] not in ENDED or status["state"] == "adapter_ready", status
        await anyio.sleep(1)
    raise AssertionError(f"run {run_id} did not end: {status['status_line']}")


@pytest.fixture(scope="module")
def agent_run(console: Console) -> dict[str, Any]:
    """A full run of two rounds an agent started over HTTP and followed to its end."""

    async def story() -> dict[str, Any]:
        async with console.over_http() as agent:
            started = answer(await agent.call_tool("start_training", {
                "baseline": "Baseline", "rounds": 2, **TINY, "name": "agent run"}))
            ending = await _until_ended(agent, started["run_id"])
            return {"started": started, "ending": ending}

    return anyio.run(story)


def test_the_tools_are_listed_with_what_they_cost_over_http_and_over_stdio(console: Console):
    async def listed(connect) -> dict[str, str]:
        async with connect() as agent:
            return {tool.name: tool.description or "" for tool in (await agent.list_tools()).tools}

    over_http = anyio.run(listed, console.over_http)
    over_stdio = anyio.run(listed, console.over_stdio)
    assert set(over_http) == TOOLS and over_stdio == over_http
    assert "GPU time" in over_http["start_training"] and "training runs this month" in over_http["start_training"]
    assert "one round" in over_http["start_training"]  # a trial's cost
    assert all("Costs nothing" in over_http[name] for name in TOOLS if name.startswith(("list_", "run_")))


def test_an_agent_trains_with_the_baseline_s_main_metric_and_follows_the_run_to_its_end(
    console: Console, agent_run: dict[str, Any]
):
    started, ending = agent_run["started"], agent_run["ending"]
    run_id = started["run_id"]
    assert started["page"] == f"{console.url}/runs/{run_id}" and started["kind"] == "full"
    assert started["state"] in ("queued", "preparing", "training")
    assert ending["state"] == "completed", ending["failure"]
    assert ending["how_it_ended"].startswith("Finished all 2 rounds") and ending["adapter"]["best_round"] >= 0

    status = answer(console.call("run_status", run_id=run_id))
    reward = status["settings"]["training"]["rl"]["reward"]
    assert (reward["preset"], reward["metric"], reward["format_bonus"]) == ("verifiable", "math_pairs", True)
    assert status["settings"]["baseline"] == console.baseline["id"]
    assert status["reward_label"] == console.baseline["metric_label"]  # the baseline's main metric, by its name
    assert [b["main_metric"] for b in answer(console.call("list_baselines"))["baselines"]] == [
        console.baseline["metric_label"]]

    rounds = answer(console.call("run_rounds", run_id=run_id))["rounds"]
    assert [r["round"] for r in rounds] == [2, 1, 0]  # newest first, round 0 the starting adapter
    assert all(r["reward"] is not None and r["signal"] is not None and r["cut_off"] is not None for r in rounds[:2])
    assert all(set(r["seconds"]) == {"sampling", "grading", "update", "validation"} for r in rounds)
    assert rounds[0]["log_line"].startswith("Round 2 of 2: reward ")

    samples = answer(console.call("run_samples", run_id=run_id))
    assert samples["rounds_offered"] == [2, 1] and samples["round"] == 2 and len(samples["prompts"]) == 3
    assert all(len(p["answers"]) == TINY["answers_per_prompt"] and p["prompt"].startswith("What is")
               for p in samples["prompts"])
    assert answer(console.call("run_samples", run_id=run_id, round=1))["round"] == 1


def test_the_console_shows_the_agent_s_run_started_by_its_token(console: Console, agent_run: dict[str, Any]):
    run_id = agent_run["started"]["run_id"]
    listed = httpx.get(f"{console.url}/api/runs", headers=console.api()).json()
    assert run_id in [run["id"] for run in listed]
    timeline = httpx.get(f"{console.url}/api/runs/{run_id}/events", headers=console.api()).json()
    by_event = {entry["event_type"]: entry for entry in timeline}
    assert (by_event["Saved"]["actor_kind"], by_event["Saved"]["actor_name"]) == ("token", "token agent")
    assert by_event["Launched"]["sentence"] == "token agent launched the run."
    page = html.unescape(httpx.get(f"{console.url}/runs/{run_id}", headers=console.api()).text)
    assert "agent run" in page and "Completed" in page
    timeline_page = html.unescape(httpx.get(f"{console.url}/runs/{run_id}/timeline", headers=console.api()).text)
    assert "token agent launched the run." in timeline_page


def test_an_agent_scores_the_adapter_against_its_baseline(console: Console, agent_run: dict[str, Any]):
    run_id = agent_run["started"]["run_id"]
    scoring = answer(console.call("score_against_baseline", run_id=run_id))
    assert scoring["baseline_id"] == console.baseline["id"] and scoring["adapter_run"] == run_id
    deadline = time.monotonic() + 120
    while (result := answer(console.call("evaluation_result", evaluation_id=scoring["evaluation_id"])))[
            "state"] in ("queued", "running"):
        assert time.monotonic() < deadline, result
        time.sleep(1)
    assert result["state"] == "completed", result["failure"]
    compared = result["against_baseline"]
    assert compared["baseline_score"] == pytest.approx(console.baseline["score"])
    assert compared["difference"] == pytest.approx(compared["adapter_score"] - compared["baseline_score"])
    assert result["examples"] == 16


def test_an_agent_on_stdio_tries_a_trial_and_reads_its_samples(console: Console):
    async def story() -> None:
        async with console.over_stdio() as agent:
            projects = answer(await agent.call_tool("list_projects", {}))["projects"]
            assert [p["name"] for p in projects] == ["Demo"]
            started = answer(await agent.call_tool("start_training", {
                "baseline": console.baseline["id"], "project": "Demo", "trial": True, "rounds": 20, **TINY,
                "name": "agent trial"}))
            assert started["kind"] == "trial" and started["reward"] == console.baseline["metric_label"]
            ending = await _until_ended(agent, started["run_id"])
            assert ending["state"] == "completed", ending["failure"]
            assert ending["trial_report"] is not None
            rounds = answer(await agent.call_tool("run_rounds", {"run_id": started["run_id"]}))["rounds"]
            assert [r["round"] for r in rounds] == [1, 0]  # a trial runs one round, whatever Rounds says
            samples = answer(await agent.call_tool("run_samples", {"run_id": started["run_id"]}))
            assert samples["round"] == 1 and samples["prompts"]

    anyio.run(story)


def test_an_agent_cancels_the_run_it_started(console: Console):
    async def story() -> None:
        async with console.over_http() as agent:
            started = answer(await agent.call_tool("start_training", {
                "baseline": "Baseline", "rounds": 200, **TINY, "name": "to cancel"}))
            cancelled = answer(await agent.call_tool("cancel_run", {"run_id": started["run_id"]}))
            assert (cancelled["state"], cancelled["status"]) == ("cancelled", "Cancelled")
            ending = await _until_ended(agent, started["run_id"])
            assert ending["state"] == "cancelled"

    anyio.run(story)


def test_a_viewer_and_a_free_plan_are_refused_in_the_documents_words_and_nothing_is_recorded(
    console: Console, agent_run: dict[str, Any]
):
    settings = {"baseline": "Baseline", "rounds": 1, **TINY}
    before = console.position()
    assert refusal(console.call("start_training", token="watcher", **settings)) == ROLE_NEEDED
    assert refusal(console.call("start_training", token="outsider", **settings)) == PRO_PLAN_NEEDED
    out_of_range = console.call("start_training", **{**settings, "answers_per_prompt": 1})
    assert refusal(out_of_range) == "answers_per_prompt: Answers per prompt must be a whole number from 2 to 64."
    assert out_of_range.structured_content["errors"] == {
        "answers_per_prompt": "Answers per prompt must be a whole number from 2 to 64."}
    assert refusal(console.call("cancel_run", token="watcher", run_id=agent_run["started"]["run_id"])) == (
        VIEWERS_READ_ONLY)
    assert console.position() == before
    # a viewer reads everything
    assert answer(console.call("run_status", token="watcher", run_id=agent_run["started"]["run_id"]))["state"] == (
        "completed")


def test_another_organization_s_run_is_not_found(console: Console, agent_run: dict[str, Any]):
    run_id = agent_run["started"]["run_id"]
    for tool in ("run_status", "run_rounds", "run_ending", "run_samples"):
        assert refusal(console.call(tool, token="outsider", run_id=run_id)) == (
            "There is no such run in this organization.")
    assert answer(console.call("list_runs", token="outsider"))["runs"] == []
    assert refusal(console.call("run_status", run_id="not-an-id")) == "There is no such run in this organization."


def test_the_mcp_endpoint_takes_only_an_api_token(console: Console):
    assert httpx.post(console.mcp_url, json={}).status_code == 401
    refused = httpx.post(console.mcp_url, json={}, headers={"Authorization": "Bearer vrt_unknown"})
    assert refused.status_code == 401 and refused.json()["detail"] == "This API token is unknown or revoked."
