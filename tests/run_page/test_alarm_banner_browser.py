"""A run's alarm banner in headless Chromium (issue 21), against `verity serve`: the page is open while rounds arrive,
and the banner comes by itself (the status part's poll) when the prompt set shows no signal three rounds in a row and
its answers grow towards Longest sampled answer, with what was seen and what to do; the API shows the same alarms.

The rounds are recorded into the console's event store by this test, as the jobs record them, on a run whose
ledger row this test holds (so the console's worker leaves it alone): a tiny-model run that provokes alarms is
tests/jobs/test_alarms_on_tiny_model.py's. A screenshot goes to artifacts/run-page-alarm.png."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import consoles
import httpx
import pytest
from consoles import ARTIFACTS, Served, chromium, needs_chromium, sign_in, watch_problems
from playwright.sync_api import expect
from rounds import REAL_MODEL_ROUND

from domain.actors import Actor
from domain.runs import alarms
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from jobs.ledger import Ledger
from verity.config import Settings
from verity.wiring import build_application, ensure_default_organization

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]

OWNER = Actor("person", "owner@localhost", "owner@localhost")
RUN = {"name": "an all too easy prompt set",
       "training": {"rl": {"rounds": 20, "max_answer_tokens": 64,
                           "reward": {"preset": "verifiable", "metric": "math_pairs"}}}}
# the same answer to every prompt, right: no signal; answers longer each round, and more of them cut off
TOO_EASY = [{"mean_answer_tokens": tokens, "cut_off": cut_off} for tokens, cut_off in ((20, 0.0), (35, 0.1), (56, 0.3))]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("verity") / "data"
    with consoles.served_console(data_dir) as console:
        yield console


def round_of(number: int, **figures: Any) -> RoundResult:
    if number == 0:
        return RoundResult(0, 0.5, validation_seconds=REAL_MODEL_ROUND["validation_seconds"])
    same = {"signal": 0.0, "reward": 1.0, "uniform_value": 1.0, "updated": False, "loss": None}
    return RoundResult(number, 0.5, **{**REAL_MODEL_ROUND, **same, **figures})


def test_the_banner_says_what_was_seen_and_what_to_do_when_the_alarms_are_raised(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    settings = Settings(data_dir=served.data_dir)
    verity = build_application(settings)
    org_id, project_id = ensure_default_organization(settings, verity)
    run_id = verity.save_run(org_id, project_id, run_body_from_api(RUN), OWNER).id
    ledger = Ledger(settings)
    assert ledger.claim(run_id, "local", "alarm-test", os.getpid(), stale_after=60.0)  # the console's worker waits
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    for number in range(3):
        verity.record_round_scored(run_id, round_of(number, **(TOO_EASY[number - 1] if number else {})))

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        problems = watch_problems(page)
        sign_in(page, served.url, served.email, served.password)
        page.goto(f"{served.url}/runs/{run_id}")
        expect(page.locator("#run-status .badge")).to_contain_text("Training · round 3 / 20")  # rounds 0-2 scored
        assert page.locator("#run-alarms").count() == 0  # two rounds without a signal are not yet an alarm

        ledger.beat(run_id, "alarm-test")
        verity.record_round_scored(run_id, round_of(3, **TOO_EASY[2]))  # the third: both alarms at once
        banner = page.locator("#run-alarms")
        expect(banner.locator(".alarm")).to_have_count(2, timeout=15_000)  # by the poll, without a reload
        no_signal = banner.locator(f"[data-alarm={alarms.NO_SIGNAL}]")
        expect(no_signal).to_contain_text("Alarm · No learning signal")
        expect(no_signal).to_contain_text("after round 3")
        expect(no_signal).to_contain_text("Rounds 1-3 had no signal: every answer to each prompt scored alike "
                                          "(mean reward 1.00: all right), so they taught nothing.")
        expect(no_signal).to_contain_text("What to do: The prompts are all too easy or all too hard")
        growing = banner.locator(f"[data-alarm={alarms.ANSWERS_GROWING}]")
        expect(growing).to_contain_text("Answers grew from 20 to 56 tokens on average over rounds 1-3, towards the "
                                        "Longest sampled answer of 64; 30% were cut off in round 3 (0% in round 1).")
        page.screenshot(path=str(ARTIFACTS / "run-page-alarm.png"), full_page=False)

        page.click("a:has-text('Timeline')")
        expect(page.locator("body")).to_contain_text("Alarm after round 3 — No learning signal")
        page.screenshot(path=str(ARTIFACTS / "run-page-alarm-timeline.png"), full_page=False)
        assert problems == []
        browser.close()

    shown = httpx.get(f"{served.url}/api/runs/{run_id}", headers=served.api, timeout=30).json()
    assert [(a["kind"], a["round"]) for a in shown["alarms"]] == [(alarms.ANSWERS_GROWING, 3), (alarms.NO_SIGNAL, 3)]
    verity.cancel_run(org_id, run_id, OWNER)
    ledger.release(run_id)
    verity.close()
