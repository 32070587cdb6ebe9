"""Compare runs in headless Chromium, against `verity serve` that trains two real tiny-model runs of the Demo
project, alike but for their learning rate: from the Runs list a person ticks both and compares them, reads the
learning rate first among the settings, sees a line for each run on the charts, and opens a prompt both drew to
read each run's answers side by side. Screenshots go to artifacts/ for a person to look at."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import httpx
import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, sign_in, watch_problems

if TYPE_CHECKING:
    from conftest import Served

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]

# 8 prompts, 4 a round, 2 rounds: with the same seed both runs make the same Math Pairs prompts and draw them alike
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 8, "format_bonus": True}
LEARNING_RATES = {"quick learner": 5e-4, "slow learner": 1e-5}
ENDED = ("completed", "adapter_ready", "failed", "cancelled")


def _tiny_run(name: str, learning_rate: float) -> dict:
    return {
        "name": name,
        "training": {
            "time_limit_hours": 1,
            "rl": {"rounds": 2, "prompts_per_round": 4, "answers_per_prompt": 4, "max_answer_tokens": 16,
                   "reward": MATH_PAIRS},
            "advanced": {"learning_rate": learning_rate, "micro_batch_size": 16, "training_window": 128},
        },
    }


def _launched(served: Served, name: str, learning_rate: float) -> str:
    saved = httpx.post(f"{served.url}/api/runs", json=_tiny_run(name, learning_rate), headers=served.api, timeout=30)
    assert saved.status_code == 201, saved.text
    run_id = saved.json()["run"]["id"]
    launched = httpx.post(f"{served.url}/api/runs/{run_id}/launch", headers=served.api, timeout=30)
    assert launched.status_code == 200, launched.text
    return run_id


def _wait_ended(served: Served, run_ids: list[str], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = [served.run(run_id) for run_id in run_ids]
        if all(run["state"] in ENDED for run in runs):
            assert all(run["state"] in ("completed", "adapter_ready") for run in runs), runs
            return
        time.sleep(1)
    raise AssertionError(f"the runs did not end in {timeout:.0f} s")


@pytest.fixture(scope="module")
def two_runs(served: Served) -> dict[str, str]:
    """Both runs launched: the worker trains one, then the other, while the page is opened."""
    return {name: _launched(served, name, rate) for name, rate in LEARNING_RATES.items()}


def test_two_runs_compared_from_the_runs_list_side_by_side(served: Served, two_runs: dict[str, str]) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(20_000)
        problems = watch_problems(page)
        sign_in(page, served.url, served.email, served.password)

        # ticked while the runs train, the ticks outlast the list's polls until both runs have ended
        page.goto(f"{served.url}/runs")
        expect(page.locator("#runs-table[hx-trigger='every 2s']")).to_have_count(1)
        for name in LEARNING_RATES:
            page.get_by_label(f"Compare {name}").check()
        expect(page.locator("#runs-table[hx-trigger]")).to_have_count(0, timeout=300_000)
        _wait_ended(served, list(two_runs.values()), timeout=30)
        for name in LEARNING_RATES:
            expect(page.get_by_label(f"Compare {name}")).to_be_checked()
        page.get_by_role("button", name="Compare ticked runs").click()
        page.wait_for_url(f"{served.url}/runs/compare?run=*")

        # the setting that differs comes first, one value a run; the others fold away under the settings shared
        first_row = page.locator("#settings-differing tbody tr").first
        expect(first_row.locator("th")).to_have_text("Learning rate")
        cells = first_row.locator("td").all_inner_texts()
        assert set(cells) == {"0.0005", "1e-05"}
        expect(page.locator("#settings-differing tbody tr")).to_have_count(1)
        expect(page.locator("#settings-shared table")).not_to_be_visible()

        # a line for each run on every chart, named in the legend
        for key in ("reward", "validation", "signal", "cut_off", "answer_tokens", "seconds"):
            chart = page.locator(f"#compare-{key} .chart")
            expect(chart.locator(".main-svg").first).to_be_attached()
            names = chart.evaluate("element => element.data.map(trace => trace.name)")
            assert sorted(names) == sorted(LEARNING_RATES), (key, names)
            drawn = chart.evaluate("element => element.data.map(trace => trace.y.filter(v => v !== null).length)")
            assert all(count >= 1 for count in drawn), (key, drawn)
            expect(chart.locator(".legendtext")).to_have_count(2)
        assert page.locator("#compare-validation .chart").evaluate("element => element.data[0].x[0]") == 0

        # a prompt both runs drew opens to each round's answers of both runs, side by side with their scores
        shared = page.locator("details.shared-prompt")
        expect(shared.first).to_be_visible()
        summary = shared.first.locator("summary").inner_text()
        assert all(f"{name}: drawn" in summary for name in LEARNING_RATES), summary
        shared.first.locator("summary").click()
        sides = shared.first.locator(".side-by-side").first.locator(".side")
        expect(sides).to_have_count(2)
        expect(shared.first.locator(".prompt-body")).to_contain_text("Prompt")
        for side in sides.all():
            assert side.locator(".answers li").count() == 4 or "Not drawn in this round" in side.inner_text()
        expect(shared.first.locator(".answers .score").first).to_have_text(re.compile(r"^\d\.\d\d$"))

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "compare-runs.png"), full_page=True)
        assert problems == []
        browser.close()
