"""The Prompts tab and `GET /api/runs/{id}/prompts`: a run's rounds reported as the trainer reports them (each
round's prompts summed up by trainer/prompt_summary.py) and recorded as the jobs record them, with the rollout
files the trainer writes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from consoles import ClientConsole, client_console
from prompt_rounds import record_prompt_rounds

from app.auth.testing import bearer_headers
from app.shell.kept import KeptByState
from domain.actors import Actor
from domain.runs.settings import run_body_from_api
from verity.config import Settings
from verity.storage import LocalStorage, open_storage

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
# Two rounds over six training prompts, four answers each: prompt → its answers' scores in round 1, then round 2.
ROUNDS = [
    {0: [0, 0, 0, 1], 1: [1, 1, 1, 1], 2: [0, 0, 0, 0], 3: [1, 1, 0, 1], 4: [0, 0, 1, 0], 5: [1, 1, 1, 0]},
    {0: [1, 1, 1, 0], 1: [1, 1, 1, 1], 2: [0, 0, 0, 0], 3: [0, 0, 0, 1], 4: [0, 1, 0, 0], 5: [1, 1, 1, 1]},
]
VERDICTS = {0: "learned", 1: "never taught", 2: "never taught", 3: "flipping", 4: "still failing", 5: "always passing"}
# every answer has 5 tokens (tests/prompt_rounds.py): each group has 20, and a round's 4 s of sampling give it 2/3 s


@dataclass
class Console(ClientConsole):
    storage: LocalStorage

    def trained_run(self) -> UUID:
        body = {"name": "prompts", "training": {"rl": {"rounds": 2, "reward": MATH_PAIRS}}}
        run_id = self.verity.save_run(self.org_id, self.project_id, run_body_from_api(body), OWNER).id
        self.verity.launch_run(self.org_id, run_id, OWNER, "owner")
        self.verity.record_preparing(run_id)
        record_prompt_rounds(self.verity, self.storage, run_id, ROUNDS)
        self.settle()
        return run_id


@pytest.fixture
def console(sqlite_settings: Settings) -> Iterator[Console]:
    with client_console(sqlite_settings, Console, None, open_storage(sqlite_settings)) as console:
        yield console


def test_the_prompts_tab_gives_each_prompt_its_verdict_and_what_dead_prompts_cost(console: Console) -> None:
    run_id = console.trained_run()
    page = console.client.get(f"/runs/{run_id}/prompts").text
    assert 'aria-selected="true"' in page.split(">Prompts</a>")[0].rsplit("<a", 1)[1]
    # 5 of the 12 groups scored alike (prompts 1 and 2 in both rounds, prompt 5 in round 2), as many of the tokens
    # and of the seconds: 3 all passing, 2 all failing
    assert "Groups that taught nothing" in page and "of 12: 3 all passing, 2 all failing" in page
    assert "3.3 of 8.0 s" in page and "42%" in page
    assert "3 groups taught nothing because every answer passed" in page
    assert "2 groups taught nothing because every answer failed" in page and "Start from an SFT adapter" in page
    for index, verdict in VERDICTS.items():
        row = page.split(f'<span class="mono">#{index}</span>', 1)[1].split("</summary>", 1)[0]
        assert f">{verdict}</span>" in row, (index, row)

    learned = console.client.get(f"/runs/{run_id}/prompts?verdict=learned", headers=HTMX).text
    assert "#0<" in learned and "#3<" not in learned and '<option value="learned" selected>' in learned
    by_mean = console.client.get(f"/runs/{run_id}/prompts?sort=mean", headers=HTMX).text
    order = [by_mean.index(f'"mono">#{i}<') for i in (2, 4, 0, 3, 5, 1)]  # lowest mean first, ties by number
    assert order == sorted(order)


def test_an_opened_prompt_reads_its_answers_of_every_round_that_drew_it(console: Console) -> None:
    run_id = console.trained_run()
    opened = console.client.get(f"/runs/{run_id}/prompts/3", headers=HTMX)
    assert opened.status_code == 200
    assert "What is prompt 3?" in opened.text
    for number in (1, 2):
        assert f"answer 0 to 3 in round {number}" in opened.text and f"Round {number} · mean score" in opened.text
    assert "skipped: all alike" not in opened.text and opened.text.count(">taught<") == 2
    assert console.client.get(f"/runs/{run_id}/prompts/9", headers=HTMX).status_code == 404
    outside = console.client.get(f"/runs/{run_id}/prompts/3", follow_redirects=False)
    assert outside.status_code == 303 and outside.headers["location"] == f"/runs/{run_id}/prompts"


def test_the_api_gives_every_prompts_history_and_the_dead_cost_to_its_organization_only(console: Console) -> None:
    run_id = console.trained_run()
    answer = console.client.get(f"/api/runs/{run_id}/prompts", headers=bearer_headers(console.verity, console.org_id))
    assert answer.status_code == 200
    body = answer.json()
    assert {p["index"]: p["verdict"] for p in body["prompts"]} == VERDICTS
    learned = next(p for p in body["prompts"] if p["index"] == 0)
    assert [(d["round"], d["mean_score"], d["pass_share"], d["taught"]) for d in learned["history"]] == [
        (1, 0.25, 0.25, True), (2, 0.75, 0.75, True)]
    cost = body["dead_cost"]
    assert (cost["dead_groups"], cost["too_easy"], cost["too_hard"], cost["tokens"]) == (5, 3, 2, 240)
    assert cost["tokens_share"] == pytest.approx(5 / 12) and cost["sampling_seconds"] == 8.0
    assert [r["dead_groups"] for r in cost["rounds"]] == [2, 3]
    assert len(body["advice"]) == 2
    only = console.client.get(f"/api/runs/{run_id}/prompts?verdict=never%20taught",
                              headers=bearer_headers(console.verity, console.org_id)).json()
    assert [p["index"] for p in only["prompts"]] == [1, 2]

    other = console.verity.create_organization("Other", "pro", OWNER).id
    refused = console.client.get(f"/api/runs/{run_id}/prompts", headers=bearer_headers(console.verity, other))
    assert refused.status_code == 404


def test_the_api_gives_the_prompts_a_page_at_a_time_with_the_total_and_the_next_pages_link(
    console: Console,
) -> None:
    run_id = console.trained_run()
    headers = bearer_headers(console.verity, console.org_id)
    first = console.client.get(f"/api/runs/{run_id}/prompts?sort=index&limit=4", headers=headers).json()
    assert [p["index"] for p in first["prompts"]] == [0, 1, 2, 3]
    assert (first["total"], first["offset"], first["limit"]) == (6, 0, 4)
    assert first["next"] == f"/api/runs/{run_id}/prompts?sort=index&offset=4&limit=4"
    assert [d["round"] for d in first["prompts"][3]["history"]] == [1, 2]  # a page's prompts keep their draws
    last = console.client.get(first["next"], headers=headers).json()
    assert [p["index"] for p in last["prompts"]] == [4, 5] and last["next"] is None and last["total"] == 6
    assert last["dead_cost"] == first["dead_cost"]  # the cost is the whole run's on every page
    past = console.client.get(f"/api/runs/{run_id}/prompts?offset=60", headers=headers).json()
    assert past["prompts"] == [] and past["next"] is None and past["total"] == 6


def test_a_live_runs_prompts_tab_polls_with_its_filters_and_stops_once_the_run_ends(console: Console) -> None:
    run_id = console.trained_run()  # its last round is scored: it is still training until its adapter is saved
    tab = console.client.get(f"/runs/{run_id}/prompts?sort=mean", headers=HTMX).text
    poll = tab.split('hx-get="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert 'hx-trigger="every 2s"' in tab and poll.startswith(f"/runs/{run_id}/prompts?v=") and "sort=mean" in poll
    assert console.client.get(poll, headers=HTMX).status_code == 204  # nothing changed
    console.verity.record_saving_adapter(run_id)
    console.verity.record_adapter_ready(run_id, 2, f"runs/{run_id}/adapter", "ab" * 32, 4)
    console.verity.record_completed(run_id)
    console.settle()
    ended = console.client.get(poll, headers=HTMX)
    assert ended.status_code == 200 and "every 2s" not in ended.text and '"mono">#0<' in ended.text


def test_a_live_runs_prompts_tab_shows_each_new_state_as_a_process_that_never_saw_the_run(console: Console) -> None:
    """The first viewer of each new state of a live run draws the tab that a process that never saw the run draws
    (nothing drawn for an earlier state is shown for a later one)."""
    body = {"name": "live", "training": {"rl": {"rounds": 4, "reward": MATH_PAIRS}}}
    run_id = console.verity.save_run(console.org_id, console.project_id, run_body_from_api(body), OWNER).id
    console.verity.launch_run(console.org_id, run_id, OWNER, "owner")
    console.verity.record_preparing(run_id)
    record_prompt_rounds(console.verity, console.storage, run_id, ROUNDS, total=4)
    console.settle()
    queries = ("", "?sort=mean", "?verdict=learned", "?sort=last")
    before = [console.client.get(f"/runs/{run_id}/prompts{query}", headers=HTMX).text for query in queries]
    # round 3 draws prompts 0, 2 and a new one (6), round 4 prompts 4, 5 and 6 again
    later = [{0: [0, 0, 0, 0], 2: [1, 1, 1, 0], 6: [0, 1, 0, 1]}, {4: [1, 1, 1, 1], 5: [0, 0, 0, 1], 6: [1, 1, 1, 1]}]
    for number, scores in enumerate(later, start=3):
        record_prompt_rounds(console.verity, console.storage, run_id, [scores], first=number, total=4)
        console.settle()
        read_since = [console.client.get(f"/runs/{run_id}/prompts{query}", headers=HTMX).text for query in queries]
        KeptByState.forget_all()
        read_whole = [console.client.get(f"/runs/{run_id}/prompts{query}", headers=HTMX).text for query in queries]
        assert read_since == read_whole and read_since != before
        before = read_since
    assert '"mono">#6<' in before[0] and "of 18:" in before[0]  # 6 + 6 + 3 + 3 groups
