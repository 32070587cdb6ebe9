"""The Samples part: the first three prompts of a round with every answer and its tags, the Round picker, and the
reason when a round's samples cannot be read."""

from __future__ import annotations

import re

from run_parts import HTMX, Page, rollout_line


def test_samples_show_the_first_three_prompts_with_every_answer_and_its_tags(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    page.score(run_id, 1, 0.40, 0.45)
    long_prompt = "How fast is the train? " + "x" * 2000
    page.rollouts(
        run_id,
        1,
        [
            rollout_line(long_prompt, [("80", 1.0, False, None), ("8" * 900, 0.0, True, None)]),
            rollout_line("second", [("oops", 0.0, False, "execution")]),
            rollout_line("third", [("80 km/h", 0.9, False, None)]),
            rollout_line("fourth, not shown", [("80", 1.0, False, None)]),
        ],
    )
    page.settle()
    html = page.client.get(f"/runs/{run_id}/samples", headers=HTMX).text
    assert html.count('<details class="sample">') == 3 and "fourth, not shown" not in html
    assert "Answer briefly." not in html  # a prompt shows its last user message
    assert "How fast is the train? " + "x" * (1000 - 23) + "…" in html
    assert "8" * 600 + "…" in html and "8" * 601 not in html
    assert html.count(">Cut off</span>") == 1 and html.count(">Metric failed</span>") == 1
    assert '<option value="1" selected>1</option>' in html
    assert 'hx-trigger="every 2s"' in html  # following the latest round while the run trains


def test_samples_that_cannot_be_read_say_why_and_offer_retry(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    page.score(run_id, 1, 0.40, 0.45)  # no rollout file written
    page.settle()
    html = page.client.get(f"/runs/{run_id}/samples?round=1", headers=HTMX).text
    assert "The samples could not be loaded: " in html and "is not in the storage" in html
    assert re.search(r'<button type="button" hx-get="/runs/[^"]+/samples\?round=1"[^>]*>Retry</button>', html)
    page.rollouts(run_id, 1, [rollout_line("now here", [("80", 1.0, False, None)])])
    assert "now here" in page.client.get(f"/runs/{run_id}/samples?round=1", headers=HTMX).text


def test_the_picker_offers_the_newest_ten_rounds_and_an_older_one_opens_by_its_address(page: Page) -> None:
    run_id = page.launched_run(rounds=20)
    for number in range(13):
        page.score(run_id, number, None if number == 0 else 0.4, 0.3)
    for number in (1, 12):
        page.rollouts(run_id, number, [rollout_line(f"asked in round {number}", [("80", 1.0, False, None)])])
    page.settle()
    latest = page.client.get(f"/runs/{run_id}/samples", headers=HTMX).text
    assert re.findall(r'<option value="(\d+)"', latest) == [str(n) for n in range(12, 2, -1)]
    assert "asked in round 12" in latest
    older = page.client.get(f"/runs/{run_id}/samples?round=1", headers=HTMX).text
    assert "asked in round 1<" in older and "could not be loaded" not in older
