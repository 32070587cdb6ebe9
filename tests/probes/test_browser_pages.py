"""Headless Chromium against a real `verity serve` that trains on the tiny model: Probe a reward from the form,
its page once scored (verdict, tiles, distribution, the prompts most informative first, one opened with its answers
read from storage), Use this reward opening Configure a run, and the list; screenshots to artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, served_console, sign_in, watch_problems

from verity.config import Settings

pytestmark = [pytest.mark.browser, needs_chromium]


def test_a_probe_from_the_form_shows_its_verdict_and_answers(tmp_path: Path, tiny_model_dir: Path) -> None:
    from playwright.sync_api import sync_playwright

    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir)
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    ARTIFACTS.mkdir(exist_ok=True)
    with served_console(data_dir) as served, sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        watch_problems(page)
        sign_in(page, served.url, served.email, served.password, via="/probes")
        page.click("text=Probe a reward")
        page.wait_for_url(f"{served.url}/probes/new")
        page.fill("#input-name", "Numeric accuracy on Math Pairs")
        for field, value in (("prompts", "16"), ("answers_per_prompt", "4"), ("max_answer_tokens", "16")):
            page.fill(f"#input-{field}", value)
        page.screenshot(path=str(ARTIFACTS / "probe-new.png"), full_page=True)
        page.click("text=Probe the reward")
        page.wait_for_url(f"{served.url}/probes/*-*")
        page.wait_for_selector("[data-status=scored]", timeout=120_000)
        headline = page.locator("[data-headline]").inner_text()
        assert "of 16 prompts have answers that differ" in headline or "None of 16" in headline
        page.locator("#prompts details summary").first.click()
        page.wait_for_selector("#prompts .answers-table")
        page.screenshot(path=str(ARTIFACTS / "probe-page.png"), full_page=True)
        page.click("[data-use-reward]")
        page.wait_for_url(f"{served.url}/runs/new?probe=*")
        assert page.locator("select[name=reward_metric]").input_value() == "numeric_accuracy"
        page.goto(f"{served.url}/probes")
        assert "Numeric accuracy on Math Pairs" in page.locator("table").inner_text()
        page.screenshot(path=str(ARTIFACTS / "probe-list.png"), full_page=True)
        assert page.problems == []  # type: ignore[attr-defined]
        browser.close()
