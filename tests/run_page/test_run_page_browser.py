"""The run page in headless Chromium, against `verity serve` training a real tiny-model run.

One run trains for the whole module: the page is opened while it trains and must follow it without a reload
(rounds, chart, samples), stop polling once it ends, render every tooltip and tag, give away its adapter and
history as downloads, and log no console error. Screenshots go to artifacts/ for a person to look at.
"""

from __future__ import annotations

import json
import zipfile
from typing import TYPE_CHECKING

import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, sign_in, watch_problems
from playwright.sync_api import expect

if TYPE_CHECKING:
    from conftest import Served

ENDED = ("Completed", "Adapter ready", "Failed", "Cancelled")

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def browser_page(served: Served):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium(playwright)
        context = browser.new_context(viewport={"width": 1360, "height": 1000}, accept_downloads=True)
        page = context.new_page()
        watch_problems(page)
        sign_in(page, served.url, served.email, served.password)
        yield page
        browser.close()


@pytest.fixture(scope="module")
def followed_run(served: Served, browser_page):
    """The run, launched through the API, with the page opened while it trains and followed to its end."""
    page = browser_page
    run_id = served.launch_tiny_run()
    navigations: list[str] = []
    page.goto(f"{served.url}/runs/{run_id}")
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)

    # while it trains: round rows, the chart and the samples arrive by themselves
    page.wait_for_selector("#run-rounds tbody tr >> nth=1", timeout=120_000)  # round 0 and round 1
    state_while_training = page.locator("#run-status .badge").inner_text().strip()
    rows_while_training = page.locator("#run-rounds tbody tr").count()
    page.wait_for_selector("#run-reward .chart .main-svg", timeout=30_000)
    page.wait_for_selector("#run-samples details.sample", timeout=30_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "run-page-training.png"), full_page=True)

    page.wait_for_function(
        "ended => ended.some(word => document.querySelector('#run-status .badge').textContent.includes(word))",
        arg=list(ENDED),
        timeout=150_000,
    )
    page.wait_for_timeout(2500)  # the last swaps of the other parts
    return {
        "run_id": run_id,
        "navigations": navigations,
        "state_while_training": state_while_training,
        "rows_while_training": rows_while_training,
        "run": served.run(run_id),
    }


def test_the_page_follows_the_training_run_without_a_reload(browser_page, followed_run) -> None:
    page = browser_page
    assert followed_run["state_while_training"].startswith(("Training · round", "Saving adapter"))
    assert followed_run["navigations"] == []  # every change came in a partial swap
    run = followed_run["run"]
    assert run["state"] in ("completed", "adapter_ready"), run.get("failure")
    rows = page.locator("#run-rounds tbody tr")
    assert rows.count() == run["rounds_total"] + 1 > followed_run["rows_while_training"] - 1
    assert rows.first.locator("td").first.inner_text().startswith(str(run["rounds_total"]))  # newest first
    assert page.locator("#run-rounds .badge-best").count() == 1
    log = page.locator("#run-logs pre").inner_text()
    assert f"Round 1 of {run['rounds_total']}: reward " in log and "; seconds: sampling " in log
    assert page.locator("#run-reward .ending strong").inner_text().startswith(("Finished all", "Stopped after"))
    chart = page.locator("#run-reward .chart")
    assert chart.locator(".scatterlayer .trace").count() == 2  # Reward and Validation
    assert page.locator("#run-metrics .tile").count() == 5
    assert page.locator("#run-metrics .trend").count() == 2  # Accuracy and Reward
    assert page.locator("#run-metrics .small-chart .main-svg").count() >= 3
    page.screenshot(path=str(ARTIFACTS / "run-page-finished.png"), full_page=True)


def test_polling_stops_once_the_run_has_ended(browser_page, followed_run) -> None:
    page = browser_page
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url))
    page.wait_for_timeout(4500)  # two polling periods
    assert polls == []
    assert page.locator("[hx-trigger]").count() == 0
    assert page.locator(".live-dot").count() == 0


def test_every_tooltip_and_tag_renders(browser_page, followed_run) -> None:
    page = browser_page
    tips = page.locator("#run-rounds thead .tip")
    assert tips.count() == 8
    for index in range(tips.count()):
        tip = tips.nth(index)
        tip.hover()
        shown = tip.evaluate("el => getComputedStyle(el, '::after').content")
        assert len(shown) > 20, tip.inner_text()  # the words, quoted
    grading = page.locator("#run-rounds tbody tr").first.locator("[data-cell=grading] .tip")
    grading.hover()
    assert "95th percentile" in grading.evaluate("el => getComputedStyle(el, '::after').content")
    seconds = page.locator("#run-rounds tbody tr").first.locator("td").last.locator(".tip")
    seconds.hover()
    assert "sampling" in seconds.evaluate("el => getComputedStyle(el, '::after').content")
    for tile in page.locator("#run-metrics .tile .tip").all():
        assert tile.get_attribute("data-tip")
    page.locator("#run-samples details.sample").first.click()
    answers = page.locator("#run-samples details.sample[open] .answers li")
    assert answers.count() == 4  # every answer of the prompt, with its score
    assert answers.first.locator(".score").inner_text()
    for tag in page.locator("#run-samples .tag").all():  # the tags the tiny model earned, if any
        assert tag.inner_text() in ("Cut off", "Metric failed") and tag.is_visible() is not None
    picker = page.locator("#run-samples select[name=round]")
    offered = [int(value) for value in picker.locator("option").evaluate_all("options => options.map(o => o.value)")]
    assert len(offered) == 10 and offered == sorted(offered, reverse=True)  # the latest ten, newest first
    oldest = offered[-1]
    with page.expect_response(lambda r: f"/samples?round={oldest}" in r.url):
        picker.select_option(str(oldest))
    # the swap lands a moment after the response: wait for it rather than read at once
    expect(page.locator("#run-samples .hint")).to_contain_text(f"The first three prompts of round {oldest}.")


def test_the_adapter_and_the_history_download(browser_page, followed_run, tmp_path) -> None:
    page = browser_page
    with page.expect_download() as adapter_download:
        page.click("#run-actions a:has-text('Use this adapter')")
    archive_path = tmp_path / "adapter.zip"
    adapter_download.value.save_as(archive_path)
    with zipfile.ZipFile(archive_path) as archive:
        names = archive.namelist()
        config = json.loads(archive.read("run.json"))
    assert "adapter/adapter_model.safetensors" in names and "adapter/adapter_config.json" in names
    assert config["run_id"] == followed_run["run_id"] and config["sha256"]

    with page.expect_download() as rounds_download:
        page.click("#run-actions a:has-text('rounds.csv')")
    lines = (rounds_download.value.path()).read_text().splitlines()
    rounds_total = followed_run["run"]["rounds_total"]
    assert lines[0].startswith("round_number,") and len(lines) == 1 + 1 + rounds_total  # heading, round 0, rounds
    with page.expect_download() as history_download:
        page.click("#run-actions a:has-text('history.json')")
    history = json.loads(history_download.value.path().read_text())
    assert [e["event_type"] for e in history["events"]][:2] == ["Saved", "Launched"]


def test_merge_model_writes_a_merged_checkpoint_to_storage(browser_page, followed_run, served: Served) -> None:
    page = browser_page
    page.click("#run-actions button:has-text('Merge model')")
    page.wait_for_selector(".merge-state")  # "on its way", and the summary polls until the job records its end
    page.wait_for_selector(".merge-state:has-text('Merged model written')", timeout=90_000)
    assert page.locator("#run-actions button:has-text('Merge model')").count() == 0  # merged once is enough
    merged = served.data_dir / "storage" / "runs" / followed_run["run_id"] / "merged"
    assert (merged / "model.safetensors").is_file() and (merged / "config.json").is_file()
    assert not (merged / "adapter_config.json").exists()  # a full checkpoint, not an adapter
    key = f"runs/{followed_run['run_id']}/merged"  # shown as its key in the storage, not the server's path
    assert f"Merged model written to {key} (" in page.locator(".merge-state").inner_text()
    page.goto(f"{served.url}/runs/{followed_run['run_id']}/timeline")
    timeline = page.locator("main").inner_text()
    assert "asked for the adapter of round" in timeline and f"The merged model is written to {key}:" in timeline
    assert str(served.data_dir / "storage") not in timeline


def test_the_page_logged_no_console_error(browser_page, followed_run) -> None:
    # runs last in the module: everything above happened in this page
    assert browser_page.problems == []
