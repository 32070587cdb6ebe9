"""Smoke test in headless Chromium: the run page of a live run and the Configure form load and refresh with no
console errors (htmx, plotly.js and our scripts all come from the app itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from consoles import chromium, needs_chromium, sign_in, watch_problems

if TYPE_CHECKING:
    from conftest import Served


pytestmark = [pytest.mark.browser, needs_chromium]


def test_the_run_page_and_the_form_load_without_console_errors(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    # a provider whose workers are elsewhere: the run waits Queued (and its page stays live) on this console
    body = {"name": "in the browser", "training": {"rl": {"rounds": 5}, "provider": "elsewhere"}, "kind": "trial"}
    body["training"]["rl"]["reward"] = {"preset": "verifiable", "metric": "math_pairs"}
    run_id = httpx.post(f"{served.url}/api/runs", json=body, headers=served.api).json()["run"]["id"]
    assert httpx.post(f"{served.url}/api/runs/{run_id}/launch", headers=served.api).status_code == 200

    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_page()
        problems = watch_problems(page)
        page.on("requestfailed", lambda request: problems.append(f"{request.url}: {request.failure}"))

        sign_in(page, served.url, served.email, served.password, via=f"/runs/{run_id}")  # then back to the run page
        assert page.locator("#run-status .badge").inner_text().strip() == "Queued"
        with page.expect_response(lambda response: f"/runs/{run_id}/status" in response.url):
            pass  # the live status line polls every 2 s
        page.click("text=Timeline")
        page.wait_for_selector(".timeline li")

        page.goto(f"{served.url}/runs/new")
        with page.expect_response(lambda response: response.url.endswith("/runs/summary")):
            page.fill("#input-rounds", "0")
            page.press("#input-rounds", "Tab")
        page.wait_for_selector("#error-rounds:has-text('Rounds must be a whole number')")
        page.fill("#input-rounds", "3")
        page.click("text=Save training draft")  # the form still submits as a plain form
        page.wait_for_url(f"{served.url}/runs/*-*")
        assert page.locator("#run-status .badge").inner_text().strip() == "Draft"

        # Choosing what answers are redraws the Reward section with that kind's own settings.
        page.goto(f"{served.url}/runs/new")
        page.select_option("#input-reward_preset", "classification")
        page.wait_for_selector("#input-reward_labels")

        # The JSON event feed opened in a tab names no icon: where the browser asks /favicon.ico by itself, it gets
        # the console's (a 404 was a console error)
        page.goto(f"{served.url}/api/events")
        page.wait_for_load_state("networkidle")
        browser.close()
    assert problems == []
