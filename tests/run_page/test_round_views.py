"""Viewers of one live run share what is drawn from its rounds: each drawing read and built once per state of the
run from what it shows alone, fresh again when a round arrives, reading only the rounds that arrived."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, defaultdict
from uuid import uuid4

from app.runs.round_points import REWARD_FIGURES
from app.runs.round_views import NEWEST_KEPT, RoundViews
from app.shell.kept import KeptByState
from domain.actors import Actor
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")


class CountedReads:
    """The real read models, counting each read of a run's rounds: `reads` the reads by kind, `after` each read's
    first round left out (None: from round 0), by kind."""

    def __init__(self, read_models) -> None:
        self.read_models, self.reads, self.after = read_models, Counter(), defaultdict(list)

    def _counted(self, kind: str, after) -> None:
        self.reads[kind] += 1
        self.after[kind].append(after)

    def rounds(self, org_id, run_id, after=None, newest=None):
        self._counted("rows", after)
        return self.read_models.rounds(org_id, run_id, after=after, newest=newest)

    def round_count(self, org_id, run_id):
        self._counted("count", None)
        return self.read_models.round_count(org_id, run_id)

    def round_figures(self, org_id, run_id, figures, after=None):
        self._counted("reward" if figures == REWARD_FIGURES else "metrics", after)
        return self.read_models.round_figures(org_id, run_id, figures, after=after)

    def round_seconds(self, org_id, run_id, after=None):
        self._counted("seconds", after)
        return self.read_models.round_seconds(org_id, run_id, after=after)


def a_run(tmp_path):
    settings = Settings(data_dir=tmp_path / "data")
    verity, read_models = build_application(settings), build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    draft = run_body_from_api({"training": {"rl": {"rounds": 80, "reward": {"preset": "verifiable",
                                                                           "metric": "math_pairs"}}}})
    run_id = verity.save_run(org_id, project_id, draft, OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    runner = ProjectionRunner(verity, read_models)

    def scored(*numbers: int) -> None:
        for number in numbers:
            verity.record_round_scored(run_id, RoundResult(
                round_number=number, validation_reward=0.3 + number / 200, reward=0.4 if number else None,
                signal=0.5, updated=True, sampling_seconds=2.0 + number % 3, update_seconds=1.0,
                accuracy=None if number % 4 == 0 else number / 100))
        runner.run_once()

    return read_models, org_id, run_id, scored


def drawings(views: RoundViews) -> tuple:
    return (views.rounds, views.rounds_total, views.chart, views.reward_points.round_zero, views.small_charts,
            views.tiles, views.trends, views.trained_time())


def test_each_drawing_is_read_once_per_state_from_what_it_shows_and_then_only_what_arrived(tmp_path) -> None:
    read_models, org_id, run_id, scored = a_run(tmp_path)
    scored(0, 1)
    counted = CountedReads(read_models)
    stamp = f"state-{uuid4().hex}"
    status_line = RoundViews(counted, org_id, run_id, stamp)
    assert status_line.trained_time() == (1, 4.0) and set(counted.reads) == {"seconds"}  # no row, no figure
    first = [RoundViews(counted, org_id, run_id, stamp) for _ in range(50)]  # fifty viewers, one state
    assert all(drawings(views) == drawings(first[0]) for views in first)
    assert counted.reads == {"rows": 1, "count": 1, "reward": 1, "metrics": 1, "seconds": 1}
    assert [r.round_number for r in first[0].rounds] == [1, 0] and first[0].rounds_total == 2
    assert '"Validation"' in first[0].chart and first[0].trends == [] and len(first[0].tiles) == 5

    scored(2)  # a round arrives: the run's state, and so its stamp, moves on
    after = RoundViews(counted, org_id, run_id, f"state-{uuid4().hex}")
    assert [r.round_number for r in after.rounds] == [2, 1, 0] and after.rounds == read_models.rounds(org_id, run_id)
    assert json.loads(after.chart)["x"] == [0, 1, 2]
    assert [t.name for t in after.trends] == ["Accuracy", "Reward"] and after.trained_time() == (2, 9.0)
    assert {kind: after[1:] for kind, after in counted.after.items()} == {  # then only those after the last state's
        "rows": [1], "count": [], "reward": [1], "metrics": [1], "seconds": [1]}


def test_drawings_carried_from_state_to_state_are_those_of_a_process_that_never_saw_the_run(tmp_path) -> None:
    """Rounds arrive a few at a time, more than the rows kept; each state's viewers ask for some of the drawings
    (a part shows one), and what each shows is what reading every round afresh shows."""
    read_models, org_id, run_id, scored = a_run(tmp_path)
    rng, number = random.Random(3), 0
    while number < 80:
        step = rng.choice((1, 1, 3, 60 if number < 10 else 1))
        scored(*range(number, min(number + step, 80)))
        number += step
        carried = RoundViews(read_models, org_id, run_id, f"state-{uuid4().hex}")
        for drawing in rng.sample(("rounds", "chart", "small_charts", "trained_time"), rng.randint(0, 4)):
            drawn = getattr(carried, drawing)  # a part that shows it asked for it
            if callable(drawn):
                drawn()
        carried_drawings = drawings(carried)
        KeptByState.forget_all()
        assert carried_drawings == drawings(RoundViews(read_models, org_id, run_id, f"state-{uuid4().hex}"))
        assert len(carried.rounds) == min(number, NEWEST_KEPT) and carried.rounds_total == number
    everything = RoundViews(read_models, org_id, run_id, "every row", show_all=True)
    assert everything.rounds == read_models.rounds(org_id, run_id) and everything.rounds_total == 80


def test_viewers_asking_while_the_first_draws_wait_for_its_drawing_rather_than_draw_again() -> None:
    kept: KeptByState[str] = KeptByState(4)
    made: list[int] = []
    started = threading.Event()

    def make() -> tuple[str, bool]:
        made.append(1)
        started.set()
        time.sleep(0.2)  # a slow first drawing: the others ask meanwhile
        return "drawn", True

    answers: list[str] = []
    first = threading.Thread(target=lambda: answers.append(kept.get("state", make)))
    first.start()
    started.wait(5)
    others = [threading.Thread(target=lambda: answers.append(kept.get("state", make))) for _ in range(5)]
    for thread in [*others]:
        thread.start()
    for thread in [first, *others]:
        thread.join(5)
    assert answers == ["drawn"] * 6 and len(made) == 1


def test_a_drawing_that_is_not_to_be_kept_is_drawn_again_next_time() -> None:
    kept: KeptByState[str] = KeptByState(4)
    made: list[int] = []

    def make() -> tuple[str, bool]:
        made.append(1)
        return "could not be read", False

    assert [kept.get("state", make) for _ in range(3)] == ["could not be read"] * 3 and len(made) == 3

