"""Viewers of one live run share what is drawn from its rounds: read and built once per state of the run, fresh
again when a round arrives, reading only the rounds that arrived."""

from __future__ import annotations

import threading
import time
from uuid import uuid4

from app.runs.round_views import round_views
from app.shell.kept import KeptByState
from domain.actors import Actor
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")


class CountedReads:
    """The real read models, counting how often a run's rounds are read."""

    def __init__(self, read_models) -> None:
        self.read_models, self.reads, self.after = read_models, 0, []

    def rounds(self, org_id, run_id, after=None):
        self.reads += 1
        self.after.append(after)
        return self.read_models.rounds(org_id, run_id, after=after)


def test_the_rounds_are_read_once_per_state_of_the_run(tmp_path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    verity, read_models = build_application(settings), build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    draft = run_body_from_api({"training": {"rl": {"rounds": 3, "reward": {"preset": "verifiable",
                                                                          "metric": "math_pairs"}}}})
    run_id = verity.save_run(org_id, project_id, draft, OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    runner = ProjectionRunner(verity, read_models)

    def scored(number: int) -> None:
        verity.record_round_scored(run_id, RoundResult(round_number=number, validation_reward=0.3 + number / 10,
                                                       reward=0.4 if number else None, signal=0.5, updated=True))
        runner.run_once()

    scored(0)
    scored(1)
    counted = CountedReads(read_models)
    stamp = f"state-{uuid4().hex}"
    first = [round_views(counted, org_id, run_id, stamp) for _ in range(50)]  # fifty viewers, one state
    assert counted.reads == 1 and all(views is first[0] for views in first)
    assert [r.round_number for r in first[0].rounds] == [1, 0]
    assert '"Validation"' in first[0].chart and first[0].trends == [] and len(first[0].tiles) == 5

    scored(2)  # a round arrives: the run's state, and so its stamp, moves on
    after = round_views(counted, org_id, run_id, f"state-{uuid4().hex}")
    assert counted.reads == 2 and [r.round_number for r in after.rounds] == [2, 1, 0]
    assert counted.after == [None, 1]  # every round once, then only those after the previous state's
    assert after.rounds == read_models.rounds(org_id, run_id)
    assert [t.name for t in after.trends] == ["Reward"]  # two trained rounds make a trend


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

