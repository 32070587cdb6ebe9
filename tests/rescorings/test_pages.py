"""The re-scoring pages and API over a real console (SQLite, its storage folder): Re-score with another reward from
a finished run's page, the form prefilled and its refusals in words, the page once the jobs recorded it scored, its
moved answers read from storage, and the same through the API."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from consoles import ClientConsole, client_console, record_trained
from evaluation_helpers import OWNER

from domain.rescorings.summary import answers_key
from domain.runs.settings import run_body_from_api
from verity.config import Settings
from verity.storage import open_storage

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


@dataclass
class Console(ClientConsole):
    storage: Any = None


def answer(prompt: int, j: int, old: float, new: float) -> dict:
    return {"round": 1, "prompt": prompt, "answer": j, "text": f"answer {prompt}.{j}", "reference": "5",
            "old": old, "new": new, "cut_off": False, "failure": None}


ANSWERS = [answer(0, 0, 1.0, 1.0), answer(0, 1, 1.0, 0.0), answer(1, 0, 0.0, 0.0), answer(1, 1, 0.0, 0.0)]
SUMMARY = {
    "answers": 4, "graded": 4, "moved": 1, "moved_share": 0.25, "raised": 0, "lowered": 1, "mean_old": 0.5,
    "mean_new": 0.25, "groups": 2, "gained_signal": 1, "lost_signal": 0, "gained": [{"round": 1, "prompt": 0}],
    "lost": [], "metric_failures": 0, "failures_by_kind": {}, "sandbox_batches": None, "missing_rounds": [],
    "per_round": {"round": [1], "groups": [2], "answers": [4], "moved": [1], "signal_old": [0.0],
                  "signal_new": [0.5], "mean_old": [0.5], "mean_new": [0.25]},
}


def test_a_finished_run_is_rescored_from_its_page(sqlite_settings: Settings) -> None:
    storage = open_storage(sqlite_settings)
    with client_console(sqlite_settings, Console, storage=storage) as console:
        v, org_id = console.verity, console.org_id
        body = run_body_from_api({"name": "math", "training": {"rl": {"rounds": 1, "reward": MATH_PAIRS}}})
        run_id = v.save_run(org_id, console.project_id, body, OWNER).id
        v.launch_run(org_id, run_id, OWNER, "owner")
        record_trained(v, run_id)
        console.settle()
        assert f"/rescorings/new?run={run_id}" in console.client.get(f"/runs/{run_id}").text

        form = console.client.get(f"/rescorings/new?run={run_id}").text
        assert f'<option value="run:{run_id}" selected' in form
        same = console.client.post("/rescorings/new", data={"source": f"run:{run_id}",
                                                            "metric": "verifiable:math_pairs"})
        assert same.status_code == 400 and "That is the reward these answers were scored with" in same.text
        made = console.client.post("/rescorings/new", data={"source": f"run:{run_id}", "metric": "qa:exact_match"},
                                   follow_redirects=False)
        assert made.status_code == 303, made.text
        rescoring_id = UUID(made.headers["location"].rsplit("/", 1)[-1])
        assert "Queued" in console.client.get(f"/rescorings/{rescoring_id}").text

        v.record_rescoring_scoring(rescoring_id)  # as the jobs record it, with the file the trainer writes
        key = answers_key(str(rescoring_id))
        (sqlite_settings.local_storage_dir / key).parent.mkdir(parents=True)
        (sqlite_settings.local_storage_dir / key).write_text("".join(json.dumps(a) + "\n" for a in ANSWERS))
        console.settle(v.record_rescoring_scored(rescoring_id, {**SUMMARY, "answers_key": key}).position)
        page = console.client.get(f"/rescorings/{rescoring_id}").text
        assert "Signal per round" in page and "Exact match · Q&amp;A" in page and "gains signal" in page
        moved = console.client.get(f"/rescorings/{rescoring_id}/moved").text
        assert "answer 0.1" in moved and "answer 1.0" not in moved
        api = console.client.get(f"/api/rescorings/{rescoring_id}/answers", params={"moved": "true"}).json()
        assert [(a["prompt"], a["answer"], a["old"], a["new"]) for a in api["answers"]] == [(0, 1, 1.0, 0.0)]
        shown = console.client.get(f"/api/rescorings/{rescoring_id}").json()
        assert shown["rounds"] == [{"round": 1, "groups": 2, "answers": 4, "moved": 1, "signal_old": 0.0,
                                    "signal_new": 0.5, "mean_old": 0.5, "mean_new": 0.25}]
        listed = console.client.get("/rescorings").text
        assert "math re-scored" in listed and "Math Pairs · Verifiable → Exact match · Q&amp;A" in listed
