"""Roles in headless Chromium, against one `verity serve` for the module: an owner adds a member and a viewer
under Settings → Members, and each signs in in a browser of their own.

A viewer is offered no control they may not use: Configure a run is shown disabled with the role's words
(screenshot: artifacts/viewer-runs.png), and a run's page has no Launch or Duplicate. A member made a viewer while
filling the Configure form keeps what they typed and reads why it was refused. On the Free plan a member's RL
launch stays on the run page with the plan's words and See plans, which opens Plan and billing; an owner's offers
Upgrade.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from consoles import (
    ARTIFACTS,
    PRO_PLAN_NEEDED,
    ROLE_NEEDED,
    VIEWERS_READ_ONLY,
    chromium,
    needs_chromium,
    served_console,
    sign_in,
)
from playwright.sync_api import Page, expect

DRAFT = {"name": "a draft to look at", "training": {"rl": {"reward": {"preset": "verifiable", "metric": "math_pairs"}}}}

pytestmark = [pytest.mark.browser, needs_chromium]


@dataclass
class Console:
    url: str
    token: str
    owner: Page
    member: Page
    viewer: Page
    member_email: str = "member@ours.example"

    def draft(self) -> str:
        answer = httpx.post(f"{self.url}/api/runs", json=DRAFT, headers={"Authorization": f"Bearer {self.token}"})
        assert answer.status_code == 201, answer.text
        return answer.json()["run"]["id"]

    def make(self, role: str) -> None:
        """The owner changes the member's role under Settings → Members."""
        self.owner.goto(f"{self.url}/settings/members")
        row = self.owner.locator("tr", has_text=self.member_email)
        row.locator("select[name=role]").select_option(role)
        row.locator("button:has-text('Change role')").click()
        expect(self.owner.locator("tr", has_text=self.member_email).locator("select[name=role]")).to_have_value(role)


@pytest.fixture(scope="module")
def console(tmp_path_factory) -> Iterator[Console]:
    from playwright.sync_api import sync_playwright

    with served_console(tmp_path_factory.mktemp("roles") / "data") as served, sync_playwright() as playwright:
        browser = chromium(playwright)

        def signed_in(email: str, password: str) -> Page:
            page = browser.new_context(viewport={"width": 1360, "height": 900}).new_page()
            page.on("dialog", lambda dialog: dialog.accept())
            sign_in(page, served.url, email, password)
            return page

        owner = signed_in(served.email, served.password)

        def added(email: str, role: str) -> str:
            owner.goto(f"{served.url}/settings/members")
            owner.fill("#input-member-email", email)
            owner.select_option("#input-member-role", role)
            owner.click("button:has-text('Add member')")
            return owner.locator(".secret-once").inner_text().strip()  # shown once

        member = signed_in("member@ours.example", added("member@ours.example", "member"))
        viewer = signed_in("viewer@ours.example", added("viewer@ours.example", "viewer"))
        yield Console(served.url, served.token, owner, member, viewer)
        browser.close()


def test_a_viewers_runs_page_shows_configure_a_run_disabled_with_why(console: Console) -> None:
    console.draft()
    page = console.viewer
    page.goto(f"{console.url}/runs")
    refused = page.locator(".page-head .role-refused")
    expect(refused.locator("[aria-disabled=true]")).to_have_text("Configure a run")
    expect(refused.locator(".role-note")).to_have_text(VIEWERS_READ_ONLY)
    expect(page.locator("a", has_text="Configure a run")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer-runs.png"), full_page=True)
    console.member.goto(f"{console.url}/runs")
    expect(console.member.locator("a", has_text="Configure a run")).to_have_count(1)


def test_a_viewer_is_offered_no_action_on_a_run(console: Console) -> None:
    run_id = console.draft()
    page = console.viewer
    page.goto(f"{console.url}/runs/{run_id}")
    expect(page.locator("#run-status .badge")).to_have_text("Draft")
    for control in ("Launch", "Duplicate"):
        expect(page.locator("#run-status button", has_text=control)).to_have_count(0)
    expect(page.locator("#run-status .role-note")).to_have_text(ROLE_NEEDED)
    console.member.goto(f"{console.url}/runs/{run_id}")
    expect(console.member.locator("#run-status button", has_text="Launch")).to_have_count(1)


def test_a_member_made_viewer_while_typing_keeps_the_form_and_reads_why(console: Console) -> None:
    page = console.member
    page.goto(f"{console.url}/runs/new")
    page.fill("#input-name", "typed before the role changed")
    page.fill("#input-rounds", "7")
    console.make("viewer")
    try:
        page.click("#save-button")
        expect(page.locator("#form-errors")).to_have_text(VIEWERS_READ_ONLY)
        expect(page.locator("#input-name")).to_have_value("typed before the role changed")
        expect(page.locator("#input-rounds")).to_have_value("7")
        expect(page.locator("#save-button")).to_be_disabled()
    finally:
        console.make("member")


def test_on_the_free_plan_a_launch_stays_on_the_run_page_with_the_plans_offer(console: Console) -> None:
    console.owner.goto(f"{console.url}/settings/plan")
    console.owner.click("button:has-text('Change to Free')")
    try:
        run_id = console.draft()
        page = console.member
        page.goto(f"{console.url}/runs/{run_id}")
        page.click("#run-status button:has-text('Launch')")
        notice = page.locator("#run-status .plan-notice")
        expect(notice).to_contain_text(PRO_PLAN_NEEDED)
        expect(notice.locator("a", has_text="Upgrade")).to_have_count(0)
        notice.locator("a", has_text="See plans").click()
        page.wait_for_url(f"{console.url}/settings/plan#plans")
        expect(page.locator("#plans")).to_contain_text("Free")

        console.owner.goto(f"{console.url}/runs/{run_id}")
        console.owner.click("#run-status button:has-text('Launch')")
        expect(console.owner.locator("#run-status .plan-notice a", has_text="Upgrade")).to_have_attribute(
            "href", "/settings/plan")
    finally:
        console.owner.goto(f"{console.url}/settings/plan")
        console.owner.click("button:has-text('Upgrade to Pro')")
