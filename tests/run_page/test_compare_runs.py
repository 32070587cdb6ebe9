"""Compare runs and `GET /api/runs/compare`: two runs of one project that differ in their learning rate, their rounds
reported as the trainer reports them and recorded as the jobs record them, with their rollout files; and the refusal
of runs of another project or of another organization."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from consoles import ClientConsole, client_console
from prompt_rounds import record_prompt_rounds

from app.auth.testing import bearer_headers
from domain.actors import Actor
from domain.runs.settings import run_body_from_api
from verity.config import Settings
from verity.storage import LocalStorage, open_storage

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
# training prompt → its answers' scores, round by round: the fast run draws prompts 0-3, the slow one 2-5
FAST = [{0: [1, 0, 0, 0], 1: [0, 0, 0, 0], 2: [1, 1, 0, 0], 3: [0, 1, 0, 1]},
        {0: [1, 1, 1, 0], 1: [1, 0, 0, 0], 2: [1, 1, 1, 1], 3: [1, 1, 0, 1]}]
SLOW = [{2: [0, 0, 0, 0], 3: [0, 0, 1, 0], 4: [0, 0, 0, 0], 5: [1, 0, 0, 0]},
        {2: [0, 1, 0, 0], 3: [0, 0, 0, 0], 4: [1, 0, 0, 0], 5: [0, 0, 0, 0]}]


@dataclass
class Console(ClientConsole):
    storage: LocalStorage

    def trained_run(self, name: str, learning_rate: float, rounds: list[dict[int, list[float]]],
                    project_id: UUID | None = None) -> UUID:
        body = {"name": name, "training": {"rl": {"rounds": len(rounds), "reward": MATH_PAIRS},
                                           "advanced": {"learning_rate": learning_rate}}}
        project = project_id or self.project_id
        run_id = self.verity.save_run(self.org_id, project, run_body_from_api(body), OWNER).id
        self.verity.launch_run(self.org_id, run_id, OWNER, "owner")
        self.verity.record_preparing(run_id)
        record_prompt_rounds(self.verity, self.storage, run_id, rounds)
        self.settle()
        return run_id

    def two_runs(self) -> tuple[UUID, UUID]:
        return self.trained_run("fast", 5e-4, FAST), self.trained_run("slow", 1e-5, SLOW)


@pytest.fixture
def console(sqlite_settings: Settings) -> Iterator[Console]:
    with client_console(sqlite_settings, Console, None, open_storage(sqlite_settings)) as console:
        yield console


def _charts(page: str) -> dict[str, dict]:
    """Each chart of the page by its figure's id, as charts.js reads it."""
    found = re.findall(r'<figure class="compare-chart" id="compare-([a-z_]+)">.*?data-chart="([^"]*)"', page, re.S)
    return {key: json.loads(data.replace("&#34;", '"').replace("&amp;", "&")) for key, data in found}


def test_the_page_lists_the_differing_setting_first_and_draws_a_line_a_run_on_each_chart(console: Console) -> None:
    fast, slow = console.two_runs()
    page = console.client.get(f"/runs/compare?run={fast}&run={slow}")
    assert page.status_code == 200
    text = page.text
    differing = text.split('id="settings-differing"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<th scope="row">([^<]+)</th>', differing) == ["Learning rate"]
    assert "<td>0.0005</td><td>1e-05</td>" in differing
    shared = text.split('id="settings-shared"', 1)[1].split("</details>", 1)[0]
    assert '<th scope="row">Seed</th><td>0</td>' in shared and "Learning rate" not in shared
    assert text.index("Settings that differ") < text.index("Settings they share") < text.index("Round by round")

    charts = _charts(text)
    assert list(charts) == ["reward", "validation", "signal", "cut_off", "answer_tokens", "seconds"]
    reward = charts["reward"]
    assert reward["x"] == [1, 2] and [line["name"] for line in reward["series"]] == ["fast", "slow"]
    assert reward["series"][0]["y"] == [31.25, 68.75] and reward["series"][1]["y"] == [12.5, 12.5]
    assert reward["percent"] and charts["answer_tokens"]["y_title"] == "tokens"
    assert charts["validation"]["x"] == [0, 1, 2]  # round 0, the starting adapter, has a validation
    assert charts["seconds"]["y_title"] == "seconds" and charts["seconds"]["series"][0]["y"] == [7.5, 7.5]

    # the prompts both drew: 2 and 3, each with how often each run drew it and its mean score there
    prompts = re.findall(r'<span class="mono">#(\d+)</span>', text.split('id="compare-prompts"', 1)[1])
    assert sorted(prompts) == ["2", "3"]
    line = text.split('<span class="mono">#2</span>', 1)[1].split("</summary>", 1)[0]
    assert "fast: drawn 2 times, mean score 0.75" in line and "slow: drawn 2 times, mean score 0.12" in line


def test_an_opened_shared_prompt_shows_each_rounds_answers_of_every_run_side_by_side(console: Console) -> None:
    fast, slow = console.two_runs()
    opened = console.client.get(f"/runs/compare/prompts/3?run={fast}&run={slow}", headers=HTMX)
    assert opened.status_code == 200
    text = opened.text
    assert "What is prompt 3?" in text
    rounds = text.split('<h3 class="subhead">')[1:]
    assert [r.split("<", 1)[0] for r in rounds] == ["Round 2", "Round 1"]  # newest first
    round_two = rounds[0]
    assert round_two.count('<div class="side">') == 2
    assert round_two.index("fast") < round_two.index("slow")
    assert "mean score 0.75" in round_two and "mean score 0.00" in round_two
    assert round_two.count("answer 0 to 3 in round 2") == 2  # each run's own rollout file
    assert console.client.get(f"/runs/compare/prompts/0?run={fast}&run={slow}", headers=HTMX).status_code == 404
    outside = console.client.get(f"/runs/compare/prompts/3?run={fast}&run={slow}", follow_redirects=False)
    assert outside.status_code == 303 and outside.headers["location"] == f"/runs/compare?run={fast}&run={slow}"


def test_the_api_gives_the_same_comparison_as_json(console: Console) -> None:
    fast, slow = console.two_runs()
    answer = console.client.get(f"/api/runs/compare?run={fast}&run={slow}",
                                headers=bearer_headers(console.verity, console.org_id))
    assert answer.status_code == 200
    body = answer.json()
    assert body["settings"]["differing"] == [
        {"setting": "learning_rate", "label": "Learning rate", "values": ["0.0005", "1e-05"]}]
    assert {"setting": "seed", "label": "Seed", "value": "0"} in body["settings"]["shared"]
    assert [run["id"] for run in body["runs"]] == [str(fast), str(slow)]
    rounds = body["runs"][0]["rounds"]
    assert [r["round"] for r in rounds] == [0, 1, 2] and rounds[0]["reward"] is None
    assert rounds[1]["reward"] == pytest.approx(0.3125) and rounds[1]["answer_tokens"] == 5.0
    assert set(rounds[2]) == {"round", "reward", "validation", "signal", "cut_off", "answer_tokens", "seconds"}
    assert body["prompts"]["apart"] is None
    two = next(p for p in body["prompts"]["shared"] if p["index"] == 2)
    assert [(r["run_id"], r["times_drawn"], r["mean_score"]) for r in two["runs"]] == [
        (str(fast), 2, 0.75), (str(slow), 2, 0.125)]


def test_runs_of_another_project_or_organization_are_refused_in_words(console: Console) -> None:
    fast, slow = console.two_runs()
    other_project = console.verity.create_project(console.org_id, "Elsewhere", "tiny-math", None, False, OWNER).id
    apart = console.trained_run("apart", 5e-4, FAST, project_id=other_project)
    refused = console.client.get(f"/runs/compare?run={fast}&run={apart}")
    assert refused.status_code == 400 and "belong to different projects" in refused.text
    api = console.client.get(f"/api/runs/compare?run={fast}&run={apart}")
    assert api.status_code == 400 and "belong to different projects" in api.json()["detail"]

    other_org = console.verity.create_organization("Other", "pro", OWNER).id
    theirs = console.client.get(f"/api/runs/compare?run={fast}&run={slow}",
                                headers=bearer_headers(console.verity, other_org))
    assert theirs.status_code == 404 and "no run" in theirs.json()["detail"]
    unknown = console.client.get(f"/runs/compare?run={fast}&run={UUID(int=7)}")
    assert unknown.status_code == 404 and "There is no run" in unknown.text

    too_few = console.client.get(f"/api/runs/compare?run={fast}")
    assert too_few.status_code == 400 and too_few.json()["detail"] == "Choose at least two runs to compare."
    seven = "&".join(f"run={UUID(int=n)}" for n in range(1, 8))
    assert "at most 6 runs" in console.client.get(f"/api/runs/compare?{seven}").json()["detail"]


def test_the_runs_list_and_the_run_page_lead_to_the_comparison(console: Console) -> None:
    fast, slow = console.two_runs()
    listed = console.client.get("/runs").text
    assert 'id="compare-runs"' in listed and f'value="{fast}" form="compare-runs"' in listed
    run_page = console.client.get(f"/runs/{fast}").text
    assert f'href="/runs/compare?run={fast}" id="compare-with"' in run_page
    chooser = console.client.get(f"/runs/compare?run={fast}")
    assert chooser.status_code == 200
    assert re.search(rf'value="{fast}"[^>]*checked', chooser.text)
    assert f'value="{slow}"' in chooser.text and not re.search(rf'value="{slow}"[^>]*checked', chooser.text)
