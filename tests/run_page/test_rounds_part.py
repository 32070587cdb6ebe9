"""The Rounds table's cells that explain themselves: a round's metric failures by kind, and the grading time per
answer in milliseconds."""

from __future__ import annotations

import re

from rounds import scored_round
from run_parts import HTMX, QUICK_ROUND, Page


def test_a_rounds_metric_failures_say_their_kinds(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    failed = scored_round(1, 0.4, QUICK_ROUND, reward=0.3, metric_failures=3,
                          failures_by_kind={"execution": 2, "timeout": 1})
    page.verity.record_round_scored(run_id, failed)
    page.settle()
    rounds = page.client.get(f"/runs/{run_id}/rounds", headers=HTMX).text
    assert 'data-tip="2 raised an error · 1 ran out of time">3</span>' in rounds


def test_a_rounds_grading_seconds_per_answer_show_in_milliseconds(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    page.verity.record_round_scored(run_id, scored_round(1, 0.4, QUICK_ROUND, reward=0.3))  # recorded before
    timed = scored_round(2, 0.4, QUICK_ROUND, reward=0.3, grading_seconds_median=0.0012, grading_seconds_p95=0.0305)
    page.verity.record_round_scored(run_id, timed)
    page.settle()
    rounds = page.client.get(f"/runs/{run_id}/rounds", headers=HTMX).text
    assert ">Grading ms<" in rounds
    cells = re.findall(r'<td class="num" data-cell="grading">(.*?)</td>', rounds)
    assert cells[0] == ('<span class="tip" tabindex="0" data-tip="median 1.2 ms · 95th percentile 30.5 ms per '
                        'answer">1.2</span>')
    assert cells[1:] == ["—", "—"]  # round 1 was recorded before, round 0 grades nothing
