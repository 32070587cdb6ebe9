"""The status line's Time left, wherever it is drawn: alone (reading only the rounds' seconds) or in a whole page."""

from __future__ import annotations

import re

from rounds import scored_round
from run_parts import HTMX, QUICK_ROUND, Page

from app.runs.view import duration
from app.shell.kept import KeptByState


def test_time_left_is_the_same_in_the_status_line_drawn_alone_and_on_every_tab(page: Page) -> None:
    """The status line drawn alone reads only the rounds' seconds (the process's first viewer), then only a new
    round's; a whole page reads the rounds: every place gives the same estimate, the Timeline and Prompts tabs too."""
    run_id = page.launched_run(rounds=10)
    page.score(run_id, 0, None, 0.30)

    def time_left(url: str, headers: dict[str, str] | None = None) -> str:
        html = page.client.get(url, headers=headers or {}).text
        return re.search(r"Time left \(est\.\): <strong>([^<]+)</strong>", html).group(1)

    expected = []
    for number, seconds in ((1, 60.0), (2, 150.0)):
        page.verity.record_round_scored(run_id, scored_round(
            number, 0.4, QUICK_ROUND, reward=0.4, accuracy=0.4, sampling_seconds=seconds, grading_seconds=10.0,
            update_seconds=seconds, validation_seconds=20.0))
        page.settle()
        done = page.read_models.run(page.org_id, run_id).rounds_done
        expected.append(duration(sum(2 * s + 30.0 for _, s in ((1, 60.0), (2, 150.0))[:number]) / number
                                 * (10 - done)))
        if number == 1:
            KeptByState.forget_all()  # nothing read yet: the status line alone is the first to ask
        assert time_left(f"/runs/{run_id}/status", HTMX) == expected[-1]
        for url in (f"/runs/{run_id}", f"/runs/{run_id}/timeline", f"/runs/{run_id}/prompts"):
            assert time_left(url) == expected[-1], url
    assert expected[0] != expected[1]  # the second round's longer seconds moved the estimate

