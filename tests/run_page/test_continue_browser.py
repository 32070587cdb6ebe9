"""Continue from round N in headless Chromium: a tiny-model run stopped by its Time limit is continued from its page
with more rounds and a new Time limit, and goes on as the same run to Completed: its rounds table, chart, samples and
timeline read as one run, each round once. The API refuses a second Continue of the completed run in words.

The console is `verity serve` with a Time limit scale that makes a limit of 0.1 hours stop training about 15
seconds after launch (the trainer stops 3 minutes before the limit, as always)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import consoles
import httpx
import pytest
from consoles import ARTIFACTS, Served, chromium, needs_chromium, sign_in, watch_problems
from playwright.sync_api import expect

from app.runs.view import ROUNDS_SHOWN

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]

TRAINS_FOR_SECONDS = 15
SCALE = (180 + TRAINS_FOR_SECONDS) / 360  # real seconds per second of a Time limit: 0.1 hours last 195 s
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": True}
STOPPED_RUN = {
    "name": "stopped by its time limit",
    "training": {
        "time_limit_hours": 0.1,
        "rl": {"rounds": 500, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16,
               "reward": MATH_PAIRS},
        "advanced": {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128},
    },
}
MORE_ROUNDS = 2


@pytest.fixture(scope="module")
def served(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("verity") / "data"
    (data_dir / "models").mkdir(parents=True)
    (data_dir / "models" / "tiny-math").symlink_to(tiny_model_dir, target_is_directory=True)
    env = {**consoles.console_env(data_dir), "VERITY_TIME_LIMIT_SCALE": str(SCALE)}
    with consoles.served_console(data_dir, env=env) as console:
        yield console


def _api(served: Served, method: str, path: str, **body) -> httpx.Response:
    return httpx.request(method, f"{served.url}/api{path}", json=body or None, headers=served.api, timeout=30)


def _run(served: Served, run_id: str) -> dict:
    return _api(served, "GET", f"/runs/{run_id}").json()


def _wait(served: Served, run_id: str, until, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while not until(run := _run(served, run_id)):
        assert time.monotonic() < deadline, f"the run is {run['state']}: {run.get('failure')}"
        time.sleep(0.5)
    return run


def test_a_run_stopped_by_its_time_limit_continues_from_its_page_as_the_same_run(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    run_id = _api(served, "POST", "/runs", **STOPPED_RUN).json()["run"]["id"]
    assert _api(served, "POST", f"/runs/{run_id}/launch").status_code == 200
    stopped = _wait(served, run_id, lambda run: run["state"] not in ("queued", "preparing", "training",
                                                                     "saving_adapter"), timeout=150)
    assert (stopped["state"], stopped["stop_reason"]) == ("adapter_ready", "time_limit"), stopped.get("failure")
    done = stopped["rounds_done"]
    assert 0 < done < 500

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        problems = watch_problems(page)
        sign_in(page, served.url, served.email, served.password)
        page.goto(f"{served.url}/runs/{run_id}")
        form = page.locator("#continue-run")
        expect(form.locator("button")).to_have_text(f"Continue from round {done}")
        form.locator("input[name=rounds]").fill(str(done + MORE_ROUNDS))
        form.locator("input[name=time_limit_hours]").fill("1")
        page.screenshot(path=str(ARTIFACTS / "run-page-continue.png"), full_page=True)
        form.locator("button").click()

        page.wait_for_url(f"**/runs/{run_id}")  # the same run's page, following it again
        expect(page.locator("#run-status .badge")).to_have_text("Completed", timeout=120_000)
        page.wait_for_timeout(2500)  # the last swaps of the other parts
        rows = page.locator("#run-rounds tbody tr td:first-child")
        if done + MORE_ROUNDS + 1 > ROUNDS_SHOWN:  # the table shows the newest rounds until asked for all
            expect(rows).to_have_count(ROUNDS_SHOWN)
            page.locator("#run-rounds .more-rows button", has_text="Show all").click()
        expect(rows).to_have_count(done + MORE_ROUNDS + 1)
        numbers = [int(text.split()[0]) for text in rows.all_inner_texts()]
        assert sorted(numbers) == list(range(done + MORE_ROUNDS + 1))  # every round once, the two segments as one
        assert page.locator("#run-reward .chart .scatterlayer .trace").count() == 2
        picker = page.locator("#run-samples select[name=round]")
        offered = picker.locator("option").evaluate_all("options => options.map(o => Number(o.value))")
        assert offered[0] == done + MORE_ROUNDS and done in offered  # the new segment's samples, and the first's
        assert page.locator("#continue-run").count() == 0  # a completed run has nothing to continue
        page.screenshot(path=str(ARTIFACTS / "run-page-continued.png"), full_page=True)
        assert problems == []
        browser.close()

    run = _run(served, run_id)
    assert (run["rounds_done"], run["rounds_total"], run["stop_reason"]) == (done + MORE_ROUNDS, done + MORE_ROUNDS,
                                                                           None)
    assert run["adapter"]["best_round"] == run["best_round"]
    sentences = [entry["sentence"] for entry in _api(served, "GET", f"/runs/{run_id}/events").json()]
    continued = (f"continued the run from round {done} (Rounds 500 → {done + MORE_ROUNDS}, Time limit (hours) 0.1 → "
                 "1); it went back on its queue.")
    assert sum(continued in s for s in sentences) == 1, sentences
    assert sum(s.startswith(f"The run resumed from round {done} on Worker ") for s in sentences) == 1
    assert sum(s.startswith(f"Round {done + 1} of ") for s in sentences) == 1
    assert sentences[-1] == "The run completed."

    again = _api(served, "POST", f"/runs/{run_id}/continue", rounds=done + 10)
    assert again.status_code == 409
    assert "Only a run stopped by its time limit or out of memory, or a cancelled run, can be continued: this run " \
           "is Completed." in again.text
