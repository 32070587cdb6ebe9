"""The top bar in headless Chromium: from 1,280 px wide its main navigation is one line (no label broken over two),
and every section it names is still one click away; screenshots to artifacts/."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from consoles import ARTIFACTS, chromium, needs_chromium, sign_in, watch_problems

if TYPE_CHECKING:
    from conftest import Served

pytestmark = [pytest.mark.browser, needs_chromium]

# Each link of the main navigation and the address it opens (Metrics and Probes name Custom metrics and Reward probes
# in their titles).
SECTIONS = {"Runs": "/runs", "Training Loops": "/loops", "Datasets": "/datasets", "Metrics": "/metrics",
            "Probes": "/probes", "Evaluations": "/evaluations", "Experiments": "/experiments"}


def test_the_main_navigation_is_one_line_from_1280_px_and_reaches_every_section(served: Served) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = chromium(playwright)
        for width in (1280, 1360):
            page = browser.new_page(viewport={"width": width, "height": 800})
            watch_problems(page)
            sign_in(page, served.url, served.email, served.password, via="/probes")
            page.screenshot(path=str(ARTIFACTS / f"top-bar-{width}.png"), clip={"x": 0, "y": 0, "width": width,
                                                                               "height": 120})
            # each item's height against its own line height: a label broken over two lines is twice as tall
            lines = page.evaluate("""() => {
                const items = [...document.querySelectorAll('nav.topnav > *')];
                const line = e => parseFloat(getComputedStyle(e).lineHeight);
                return {nav: document.querySelector('nav.topnav').getBoundingClientRect().height,
                        line: Math.max(...items.map(line)),
                        lines: items.map(e => [e.textContent.trim(), e.getBoundingClientRect().height / line(e)])};
            }""")
            assert all(count < 1.5 for _, count in lines["lines"]), f"at {width} px: {lines}"
            assert lines["nav"] < 1.5 * lines["line"], f"at {width} px the navigation takes {lines}"
            assert page.locator("nav.topnav a").all_inner_texts() == list(SECTIONS)
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing pushed past the edge
            assert page.problems == []  # type: ignore[attr-defined]
            page.close()

        page = browser.new_page(viewport={"width": 1280, "height": 800})
        sign_in(page, served.url, served.email, served.password)
        for label, path in SECTIONS.items():
            page.click(f'nav.topnav a:text-is("{label}")')
            page.wait_for_url(f"{served.url}{path}")
            assert page.locator("nav.topnav a[aria-current=page]").inner_text() == label
        assert page.locator("nav.topnav a", has_text="Metrics").get_attribute("title") == "Custom metrics"
        assert page.locator("nav.topnav a", has_text="Probes").get_attribute("title") == "Reward probes"
        browser.close()
