"""Headless Chromium against a real `verity serve` (one for the module): the New evaluation form and an
evaluation's page, the Start an automated loop form and a loop's page, the New experiment form (choosing another
reward and going back to the main metric) and an experiment's page; each loads with no console errors."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"  # git-ignored; kept by CI
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed (make browser)"),
]


@dataclass
class Served:
    url: str
    email: str
    password: str
    token: str


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    data = tmp_path_factory.mktemp("verity-browser")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "VERITY_DATA_DIR": str(data / "data")}
    env.pop("VERITY_DATABASE_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "verity.cli", "serve", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/sign-in", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "verity serve did not start"
            time.sleep(0.2)
        owner = dict(line.split(": ", 1) for line in (data / "data" / "first-owner.txt").read_text().splitlines())
        token = subprocess.run(
            [sys.executable, "-m", "verity.cli", "token", "create", "--name", "tests", "--role", "owner"],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()
        yield Served(url, owner["email"], owner["password"], token)
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def browser_page(served: Served):
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(f"{served.url}/evaluations")
        page.wait_for_url("**/sign-in?**")
        page.fill("#input-email", served.email)
        page.fill("#input-password", served.password)
        page.click("button:has-text('Sign in')")
        page.wait_for_url(f"{served.url}/evaluations")
        page.problems = problems  # type: ignore[attr-defined]
        yield page
        browser.close()


def test_a_new_evaluation_opens_its_page(served: Served, browser_page) -> None:
    page = browser_page
    page.click("text=New evaluation")
    page.wait_for_url(f"{served.url}/evaluations/new")
    page.fill("#input-name", "Baseline in the browser")
    page.fill("#input-count", "8")
    page.click("text=Start evaluation")
    page.wait_for_url(f"{served.url}/evaluations/*-*")
    assert "Baseline in the browser" in page.content()
    page.goto(f"{served.url}/evaluations")
    assert "Baseline in the browser" in page.locator("table").inner_text()
    assert page.problems == []  # type: ignore[attr-defined]


def test_starting_a_loop_opens_its_page(served: Served, browser_page) -> None:
    page = browser_page
    page.goto(f"{served.url}/loops")
    page.click("text=Start an automated loop")
    page.wait_for_url(f"{served.url}/loops/new")
    assert page.is_checked("input[name=reclaim_storage]")
    page.fill("#input-target", "150")
    page.click("text=Start loop")
    page.wait_for_selector("text=Target must be a percent from 0 to 100.")
    assert page.problems == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
    page.problems.clear()  # the refused form answers 400, which Chromium logs
    page.fill("#input-target", "35")
    page.fill("#input-rounds", "1")
    page.click("text=Start loop")
    page.wait_for_url(f"{served.url}/loops/*-*")
    assert "math-pairs to 35%" in page.content() and "of 8" in page.locator("[data-tile=rounds]").inner_text()
    assert page.problems == []  # type: ignore[attr-defined]


def test_an_experiment_page_shows_its_reward(served: Served, browser_page) -> None:
    headers = {"Authorization": f"Bearer {served.token}"}
    body = {"name": "RL in the browser", "source": {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8},
            "scoring": {"preset": "verifiable"}, "main_metric": "math_pairs",
            "rl": {"rounds": 1, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16}}
    page = browser_page
    page.goto(f"{served.url}/loops/new")  # the Project select names the Demo project's id
    body["project_id"] = page.locator("#input-project option").first.get_attribute("value")
    created = httpx.post(f"{served.url}/api/experiments", json=body, headers=headers)
    assert created.status_code == 201, created.text
    page.goto(f"{served.url}/experiments/{created.json()['id']}")
    assert "Reward: the evaluation's main metric (Math Pairs" in page.locator("[data-reward]").inner_text()
    page.goto(f"{served.url}/experiments")
    assert "RL in the browser" in page.locator("table").inner_text()
    assert page.problems == []  # type: ignore[attr-defined]


def test_the_new_experiment_form_chooses_another_reward_and_goes_back(served: Served, browser_page) -> None:
    page = browser_page
    page.goto(f"{served.url}/runs")
    page.click("nav >> text=Experiments")  # the main navigation's Evaluate group
    page.click("text=New experiment")
    page.wait_for_url(f"{served.url}/experiments/new")
    reward = page.locator("[data-reward]")
    assert reward.inner_text().startswith("Reward: the evaluation's main metric (Math Pairs")
    page.click("text=Choose another reward")  # htmx redraws the Compute step with the reward's own fields
    page.wait_for_selector("#input-reward_metric")
    assert page.is_visible("text=Use the evaluation's main metric")
    page.select_option("#input-reward_metric", "gsm8k")  # a change redraws the step and its reward line
    page.wait_for_selector("[data-reward]:has-text('GSM8K')")  # the page's CSP forbids evaluated JavaScript
    assert reward.inner_text() == "Reward: GSM8K accuracy · Verifiable"
    page.click("text=Use the evaluation's main metric")
    page.wait_for_selector("#input-reward_metric", state="detached")
    assert reward.inner_text().startswith("Reward: the evaluation's main metric (Math Pairs")
    page.click("text=Choose another reward")
    page.wait_for_selector("#input-reward_metric")
    page.uncheck("#input-reward_format_bonus")
    page.fill("#input-name", "Experiment from the form")
    page.fill("#input-count", "8")
    page.fill("#input-rounds", "1")
    page.wait_for_load_state("networkidle")  # the Benchmark problems change must not redraw Rounds back to 40
    assert page.input_value("#input-rounds") == "1"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "new-experiment.png"), full_page=True)
    page.click("text=Start experiment")
    page.wait_for_url(f"{served.url}/experiments/*-*")
    assert page.locator("[data-reward]").inner_text() == "Reward: Math Pairs · Verifiable"
    assert "Experiment from the form" in page.locator("h1").inner_text()
    assert page.problems == []  # type: ignore[attr-defined]
