"""The Prompts tab in headless Chromium, against `verity serve` over a finished run whose rounds were recorded as
the jobs record them (tests/prompt_rounds.py), with its rollout files: the tab opens from the run page, filters and
sorts in place, and a prompt opens to its answers. Screenshots go to artifacts/ for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, served_console, sign_in, watch_problems
from prompt_rounds import record_prompt_rounds

pytestmark = [pytest.mark.browser, needs_chromium]

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": True}
# Each kind of prompt's scores the n-th time it is drawn (each of the 16 is drawn 6 times in 12 rounds of 8)
KINDS = [
    lambda n: [1.0, 1.0, 1.0, 0.0] if n >= 3 else [0.0, 0.0, 0.1, 1.0],  # learned
    lambda n: [1.0, 1.0, 1.0, 1.0],  # never taught
    lambda n: [0.0, 0.0, 0.0, 0.9] if n % 2 else [0.0, 0.0, 0.0, 0.0],  # still failing
    lambda n: [0.0, 0.1, 0.0, 1.0] if n % 2 else [1.0, 0.9, 1.0, 0.0],  # flipping
    lambda n: [1.0, 1.0, 1.0, 0.1] if n % 2 else [1.0, 1.0, 1.0, 1.0],  # always passing
]


def _rounds() -> list[dict[int, list[float]]]:
    return [
        {i: KINDS[i % len(KINDS)]((number - 1) // 2) for i in range((number - 1) % 2 * 8, (number - 1) % 2 * 8 + 8)}
        for number in range(1, 13)
    ]


def _seed(data_dir: Path) -> str:
    from domain.actors import Actor
    from domain.runs.settings import run_body_from_api
    from verity.config import Settings
    from verity.storage import open_storage
    from verity.wiring import build_application, ensure_default_organization

    owner = Actor("person", "owner@localhost", "owner@localhost")
    settings = Settings(data_dir=data_dir)
    verity = build_application(settings)
    org_id, project_id = ensure_default_organization(settings, verity)
    body = {"name": "prompts to look at", "training": {"rl": {"rounds": 12, "prompts_per_round": 8,
                                                               "answers_per_prompt": 4, "reward": MATH_PAIRS}}}
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), owner).id
    verity.launch_run(org_id, run_id, owner, "owner")
    verity.record_preparing(run_id)
    record_prompt_rounds(verity, open_storage(settings), run_id, _rounds())
    verity.record_saving_adapter(run_id)
    verity.record_adapter_ready(run_id, 12, f"runs/{run_id}/adapter", "ab" * 32, 1234)
    verity.record_completed(run_id)
    verity.close()
    return str(run_id)


@pytest.fixture(scope="module")
def served_run(tmp_path_factory) -> Iterator[tuple[str, str, str, str]]:
    data_dir = tmp_path_factory.mktemp("verity-prompts") / "data"
    run_id = _seed(data_dir)
    with served_console(data_dir) as served:
        yield served.url, served.email, served.password, run_id


def _choose(page, select: str, value: str) -> None:
    """Choose an option of the list's filters and wait until the tab is drawn again with it."""
    drawn = page.locator("#tab-panel").element_handle()
    with page.expect_response(lambda r: f"{select}={value}" in r.url):
        page.select_option(f"select[name={select}]", value)
    page.wait_for_function("panel => !panel.isConnected", arg=drawn)


def test_the_prompts_tab_filters_sorts_and_opens_a_prompt_to_its_answers(served_run) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, email, password, run_id = served_run
    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(15_000)
        problems = watch_problems(page)
        sign_in(page, url, email, password)
        page.goto(f"{url}/runs/{run_id}")
        page.get_by_role("tab", name="Prompts").click()
        page.wait_for_url(f"{url}/runs/{run_id}/prompts")
        expect(page.locator("details.prompt")).to_have_count(16)
        expect(page.locator(".dead-cost")).to_contain_text("taught nothing because every answer passed")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "prompts-tab.png"), full_page=True)

        _choose(page, "verdict", "flipping")
        expect(page.locator("details.prompt")).to_have_count(3)  # prompts 3, 8 and 13
        assert set(page.locator("details.prompt .verdict").all_inner_texts()) == {"flipping"}
        assert "/prompts?verdict=flipping" in page.url  # the address keeps the filter (Back, a shared link)
        _choose(page, "sort", "mean")
        _choose(page, "verdict", "all")
        expect(page.locator("details.prompt")).to_have_count(16)
        expect(page.locator("details.prompt .verdict").first).to_have_text("still failing")

        first = page.locator("details.prompt").first
        first.locator("summary").click()
        expect(first.locator(".answers li").first).to_be_visible()
        expect(first.locator(".prompt-body")).to_contain_text("What is prompt")
        expect(first.locator("h3.subhead")).to_have_count(6)  # every round that drew it
        page.screenshot(path=str(ARTIFACTS / "prompts-tab-opened.png"), full_page=True)
        assert problems == []
        browser.close()
