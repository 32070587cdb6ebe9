"""Headless Chromium against a real `verity serve` that trains on the tiny model: a two-round run trained through
the API, then Re-score with another reward from its page, the form prefilled with the run, the re-scoring's page
once scored (tiles, the signal per round under each reward, the groups gaining or losing signal, the moved answers
read from storage), and the list reached from the reward probes' page; screenshots to artifacts/."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, served_console, sign_in, watch_problems

from tests.e2e.conftest import TINY_ADVANCED, TINY_RL
from verity.config import Settings

pytestmark = [pytest.mark.browser, needs_chromium]
ENDED = ("completed", "failed", "cancelled")


def trained_run(url: str, headers: dict[str, str]) -> str:
    """A two-round run on Math Pairs, saved, launched and ended through the API."""
    body = {"name": "Math Pairs, two rounds", "kind": "full", "training": {
        "objective": "rl", "method": "lora", "gpu_count": 1, "time_limit_hours": 1.0,
        "rl": {**TINY_RL, "rounds": 2}, "advanced": TINY_ADVANCED}}
    saved = httpx.post(f"{url}/api/runs", json=body, headers=headers, timeout=30)
    assert saved.status_code == 201, saved.text
    run_id = saved.json()["run"]["id"]
    launched = httpx.post(f"{url}/api/runs/{run_id}/launch", headers=headers, timeout=30)
    assert launched.status_code == 200, launched.text
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run = httpx.get(f"{url}/api/runs/{run_id}", headers=headers, timeout=30).json()
        if run["state"] in ENDED or (run["state"] == "adapter_ready" and run["stop_reason"] is not None):
            assert run["rounds_done"] == 2, run
            return run_id
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} never ended")


def test_a_run_rescored_from_its_page_shows_what_moved(tmp_path: Path, tiny_model_dir: Path) -> None:
    from playwright.sync_api import sync_playwright

    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir)
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)  # the Demo project's model
    ARTIFACTS.mkdir(exist_ok=True)
    with served_console(data_dir) as served, sync_playwright() as playwright:
        run_id = trained_run(served.url, served.api)
        browser = chromium(playwright)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        watch_problems(page)
        sign_in(page, served.url, served.email, served.password, via=f"/runs/{run_id}")
        page.click("[data-rescore]")
        page.wait_for_url(f"{served.url}/rescorings/new?run={run_id}")
        assert page.locator("#input-source").input_value() == f"run:{run_id}"
        page.fill("#input-name", "Math Pairs run under Boxed-answer accuracy")
        page.select_option("#input-metric", "verifiable:boxed")  # the tiny model's bare numbers are never boxed
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(ARTIFACTS / "rescoring-new.png"), full_page=True)
        page.click("text=Re-score the answers")
        page.wait_for_url(f"{served.url}/rescorings/*-*")
        page.wait_for_selector("[data-status=scored]", timeout=120_000)
        assert page.locator("#signal-per-round tbody tr").count() == 2
        assert "Boxed-answer accuracy" in page.locator("[data-new-reward]").inner_text()
        moved = int(page.locator("[data-tile=moved] .tile-value").inner_text())
        assert moved > 0  # every answer Math Pairs scored right now scores 0
        page.wait_for_selector("#moved-answers")
        assert page.locator("#moved-answers tbody tr").count() == moved
        page.screenshot(path=str(ARTIFACTS / "rescoring-page.png"), full_page=True)
        page.goto(f"{served.url}/probes")
        page.click("[data-rescorings]")
        page.wait_for_url(f"{served.url}/rescorings")
        assert "Math Pairs run under Boxed-answer accuracy" in page.locator("table").inner_text()
        page.screenshot(path=str(ARTIFACTS / "rescoring-list.png"), full_page=True)
        assert page.problems == []  # type: ignore[attr-defined]
        browser.close()
