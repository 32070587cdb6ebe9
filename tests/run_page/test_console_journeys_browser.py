"""Journeys through the console in headless Chromium, against one `verity serve` on the tiny model for the module.

While a run trains on the embedded worker: the Runs list follows it by itself (and an unchanged poll answers 204,
which the server's log keeps out of its info lines); an evaluation, an experiment and a loop Queued behind it say
what the worker is busy with; once nothing is live the list stops polling. The New loop form starts from the Demo
project's own numbers; a finished two-round loop's chart has a percent axis, each bar's value, R1 and R2, the target
line and the BEST bar (screenshot: artifacts/loop-page.png); its benchmark's answered tile says how many of how many.
The New evaluation form asks for the settings its metric needs, refuses them with the domain's words, and saves them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, sign_in, watch_problems
from playwright.sync_api import expect

if TYPE_CHECKING:
    from conftest import Served

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
ADVANCED = {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128}
# Long enough to still be training while the other pages are looked at; cancelled once they have been.
LONG_RUN = {"name": "the long one", "training": {"rl": {"rounds": 60, "prompts_per_round": 8, "answers_per_prompt": 4,
                                                         "max_answer_tokens": 16, "reward": MATH_PAIRS},
                                                  "advanced": ADVANCED}}
# A loop round that learns a little in half a minute: twelve GRPO steps from the previous round's adapter.
LOOP_ROUND = {"rl": {"rounds": 12, "prompts_per_round": 16, "answers_per_prompt": 8, "max_answer_tokens": 16},
              "advanced": ADVANCED}
# The chart reads the scores, whatever they are: a loop round of a few GRPO steps, benchmarked on 32 problems.
CHART_ROUND = {"rl": {"rounds": 3, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16},
               "advanced": ADVANCED}
CHART_BENCHMARK = 32
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
LIVE_WORDS = ("Queued", "Preparing", "Training", "Saving adapter")

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def browser_page(served: Served):
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        watch_problems(page)
        sign_in(page, served.url, served.email, served.password)
        yield page
        browser.close()


def _api(served: Served, method: str, path: str, **body) -> dict:
    answer = httpx.request(method, f"{served.url}/api{path}", json=body or None, headers=served.api, timeout=30)
    assert answer.status_code < 300, answer.text
    return answer.json()


@pytest.fixture(scope="module")
def long_run(served: Served, browser_page) -> Iterator[dict]:
    """A run training on the embedded worker, seen on the Runs list as it goes from Queued to Training."""
    page = browser_page
    run = _api(served, "POST", "/runs", **LONG_RUN)["run"]
    _api(served, "POST", f"/runs/{run['id']}/launch")
    page.goto(f"{served.url}/runs")
    navigations: list[str] = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)
    try:
        row = page.locator(f"#runs-table tr:has(a[href='/runs/{run['id']}'])")
        first_seen = row.locator(".badge").inner_text()
        expect(row.locator(".badge")).to_contain_text("Training · round", timeout=120_000)
        yield {**run, "first_seen": first_seen, "navigations": navigations}
    finally:  # the worker is free for the loop below
        if _api(served, "GET", f"/runs/{run['id']}")["state"] in ("queued", "preparing", "training"):
            _api(served, "POST", f"/runs/{run['id']}/cancel")


def test_the_runs_list_follows_a_live_run_without_a_reload(browser_page, long_run) -> None:
    assert long_run["first_seen"].startswith(("Queued", "Preparing"))  # then Training, by itself
    assert long_run["navigations"] == []
    assert browser_page.locator("#runs-table[hx-trigger='every 2s']").count() == 1


def test_an_unchanged_poll_answers_204_and_stays_out_of_the_info_log(served: Served, browser_page, long_run) -> None:
    page = browser_page
    page.goto(f"{served.url}/runs")
    poll = page.locator("#runs-table").get_attribute("hx-get")
    for _ in range(20):  # a round that ends between two asks changes the list: ask again with its new stamp
        answer = page.request.get(f"{served.url}{poll}", headers={"HX-Request": "true"})
        if answer.status == 204:
            break
        poll = re.search(r'hx-get="([^"]+)"', answer.text()).group(1).replace("&amp;", "&")
    assert answer.status == 204, answer.status
    log = (served.data_dir.parent / "serve.log").read_text()
    assert f'"GET {poll} HTTP/1.1" 204' not in log  # info is the server's level: the empty poll is debug
    assert re.search(r'INFO: .*"GET /runs HTTP/1\.1" 200', log)  # a page asked for is still an info line


def test_queued_work_says_what_the_worker_is_busy_with(served: Served, browser_page, long_run) -> None:
    page = browser_page
    project_id = _api(served, "GET", f"/runs/{long_run['id']}")["project_id"]
    evaluation = _api(served, "POST", "/evaluations", project_id=project_id, name="behind the long one",
                      source=HELD_OUT, scoring={"preset": "verifiable"}, main_metric="math_pairs", max_answer_tokens=16)
    experiment = _api(served, "POST", "/experiments", project_id=project_id, name="also behind it", source=HELD_OUT,
                      scoring={"preset": "verifiable"}, main_metric="math_pairs", max_answer_tokens=16,
                      rl=LOOP_ROUND["rl"], advanced=ADVANCED)
    loop = _api(served, "POST", "/loops", project_id=project_id, name="a loop behind it", target=90, max_rounds=1,
                give_up_after=1, benchmark_size=8, training=LOOP_ROUND)
    waiting = re.compile(r"^Waiting for the worker: it is training run the long one \(round \d+ of 60\)\.$")
    for address in (f"/evaluations/{evaluation['id']}", f"/experiments/{experiment['id']}", f"/loops/{loop['id']}"):
        page.goto(f"{served.url}{address}")
        expect(page.locator(".status")).to_have_text("Queued")
        expect(page.locator("[data-waiting]")).to_have_text(waiting)
        if address.startswith("/evaluations/"):
            page.screenshot(path=str(ARTIFACTS / "queued-evaluation.png"))
    # they would train runs of their own next: the loop below is the one this module waits for
    _api(served, "POST", f"/experiments/{experiment['id']}/stop")
    _api(served, "POST", f"/loops/{loop['id']}/stop")


def test_the_runs_list_stops_polling_once_nothing_is_live(served: Served, browser_page, long_run) -> None:
    page = browser_page
    page.goto(f"{served.url}/runs")
    expect(page.locator("#runs-table[hx-trigger]")).to_have_count(1)
    _api(served, "POST", f"/runs/{long_run['id']}/cancel")
    row = page.locator(f"#runs-table tr:has(a[href='/runs/{long_run['id']}'])")
    expect(row.locator(".badge")).to_have_text("Cancelled", timeout=15_000)  # by itself, then no more polls
    expect(page.locator("#runs-table[hx-trigger]")).to_have_count(0)
    assert not any(word in page.locator("#runs-table").inner_text() for word in LIVE_WORDS)


def test_the_new_loop_form_starts_from_the_projects_own_numbers(served: Served, browser_page) -> None:
    page = browser_page
    page.goto(f"{served.url}/loops/new")
    shown = {name: page.input_value(f"#input-{name}") for name in
             ("rounds", "prompts_per_round", "answers_per_prompt", "max_answer_tokens", "learning_rate")}
    # the Demo project's numbers for the tiny model, as Configure a run starts from (verity/wiring.py)
    assert shown == {"rounds": "40", "prompts_per_round": "16", "answers_per_prompt": "8", "max_answer_tokens": "16",
                     "learning_rate": "0.0005"}


def test_a_finished_loops_chart_reads_clearly(served: Served, browser_page) -> None:
    page = browser_page
    page.goto(f"{served.url}/loops/new")  # the Project select names the Demo project's id
    project_id = page.locator("#input-project option").first.get_attribute("value")
    loop = _api(served, "POST", "/loops", project_id=project_id, name="math-pairs to 60%", target=60, max_rounds=2,
                give_up_after=2, benchmark_size=CHART_BENCHMARK, training=CHART_ROUND)
    page.goto(f"{served.url}/loops/{loop['id']}")
    expect(page.locator(".status")).to_have_text(re.compile("Rounds spent|Target reached|Plateaued"),
                                                 timeout=300_000)
    rounds = _api(served, "GET", f"/loops/{loop['id']}")["rounds"]
    assert len(rounds) == 2 and all(r["score"] is not None for r in rounds)

    chart = page.locator("#bars svg")
    ticks = chart.locator(".y-tick").all_text_contents()
    assert ticks[0] == "0%" and all(t.endswith("%") for t in ticks) and len(ticks) >= 3
    assert chart.locator(".x-tick").all_text_contents() == ["R1", "R2"]
    bars = [chart.locator(f".bar[data-round='{r['round_number']}']") for r in rounds]
    for bar, r in zip(bars, rounds, strict=True):
        assert bar.locator(".bar-value").text_content() == f"{r['score'] * 100:.1f}%"
    heights = [float(bar.locator("rect").get_attribute("height")) for bar in bars]
    baseline = float(chart.locator(".axis-x").get_attribute("y1"))
    top_tick = chart.locator(".y-tick").last
    per_point = (baseline - float(top_tick.get_attribute("y"))) / float(top_tick.text_content().rstrip("%"))
    for height, r in zip(heights, rounds, strict=True):  # a bar is as tall as its score on the axis
        assert height == pytest.approx(r["score"] * 100 * per_point, abs=0.2)
    assert chart.locator(".target-label").text_content() == "Target 60.0%"
    target_y = float(chart.locator(".target-line").get_attribute("y1"))
    assert target_y == pytest.approx(baseline - 60 * per_point, abs=0.2)
    best = next(r for r in rounds if r["is_best"])
    assert chart.locator(".bar.best").get_attribute("data-round") == str(best["round_number"])
    assert chart.locator(".bar.best .bar-best").text_content() == "BEST" and chart.locator(".bar-best").count() == 1
    best_fill = chart.locator(".bar.best rect").evaluate("el => getComputedStyle(el).fill")
    other = next(bar for bar, r in zip(bars, rounds, strict=True) if not r["is_best"])
    assert other.locator("rect").evaluate("el => getComputedStyle(el).fill") != best_fill
    page.screenshot(path=str(ARTIFACTS / "loop-page.png"), full_page=True)

    # 001's score breakdown on the round's benchmark: answered is a share of the answers and how many of how many
    page.click("#rounds tr[data-round='1'] a:has-text('benchmark')")
    evaluation = _api(served, "GET", page.url.replace(served.url, ""))["evaluation"]
    answered = evaluation["breakdown"]["answered"]
    expect(page.locator("[data-tile=answered] strong")).to_have_text(
        f"{answered * 100:.0f}% · {round(answered * CHART_BENCHMARK)} of {CHART_BENCHMARK}")
    page.screenshot(path=str(ARTIFACTS / "loop-round-benchmark.png"))
    assert page.problems == []  # type: ignore[attr-defined]


def test_a_new_evaluation_asks_for_its_metrics_settings_and_saves_them(served: Served, browser_page) -> None:
    page = browser_page
    page.goto(f"{served.url}/evaluations/new")
    offered = page.locator("#input-metric option").all_inner_texts()
    assert not any("LLM judge" in o or "RadEval" in o for o in offered)  # no judge model here: not offered
    assert page.locator("[id^=input-reward_]").count() == 0  # Math Pairs needs no settings

    page.select_option("#input-metric", "classification:accuracy")
    expect(page.locator("#input-reward_labels")).to_be_visible()
    assert page.locator("label[for=input-reward_labels]").inner_text() == "Allowed labels"
    page.select_option("#input-metric", "structured_json:field_match")
    expect(page.locator("#input-reward_response_schema")).to_be_visible()
    expect(page.locator("#input-reward_fields")).to_be_visible()
    expect(page.locator("#input-reward_labels")).to_have_count(0)
    page.select_option("#input-metric", "numeric:numeric_accuracy")
    expect(page.locator("#input-reward_absolute_tolerance")).to_be_visible()
    expect(page.locator("#input-reward_relative_tolerance")).to_be_visible()
    expect(page.locator("#input-reward_response_schema")).to_have_count(0)

    page.fill("#input-name", "Numbers, give or take")
    page.fill("#input-count", "8")
    page.fill("#input-max-answer-tokens", "16")
    page.fill("#input-reward_absolute_tolerance", "-1")
    page.click("text=Start evaluation")
    expect(page.locator("#error-reward_absolute_tolerance")).to_have_text("Absolute tolerance can't be negative.")
    page.screenshot(path=str(ARTIFACTS / "new-evaluation-refused.png"), full_page=True)
    assert page.input_value("#input-metric") == "numeric:numeric_accuracy"  # the form comes back as typed
    page.problems.clear()  # type: ignore[attr-defined]  # the refused form answers 400, which Chromium logs
    page.fill("#input-reward_absolute_tolerance", "0.5")
    page.fill("#input-reward_relative_tolerance", "0.01")
    page.click("text=Start evaluation")
    page.wait_for_url(f"{served.url}/evaluations/*-*")
    saved = _api(served, "GET", page.url.replace(served.url, ""))["evaluation"]
    scoring = json.loads(saved["scoring_json"])
    assert (scoring["absolute_tolerance"], scoring["relative_tolerance"]) == (0.5, 0.01)
    assert saved["main_metric"] == "numeric_accuracy"
    assert page.problems == []  # type: ignore[attr-defined]
