"""Every child process of the jobs is watched by one supervisor (jobs/supervisor.py), the watchdog included: an
evaluation or a merge still running past its time limit is stopped, and says so in words."""

from __future__ import annotations

import pytest

from jobs import evaluations, merge
from tests.jobs.conftest import OWNER, World

HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}


def test_an_evaluation_past_its_time_limit_is_stopped_by_the_watchdog(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaluations, "EVALUATION_TIME_LIMIT_SECONDS", 0)  # its time is up as soon as it starts
    evaluation_id = world.verity.create_evaluation(
        world.org_id, world.project_id, name="too long", source=HELD_OUT, scoring={"preset": "verifiable"},
        main_metric="math_pairs", actor=OWNER, max_answer_tokens=16,
    ).id

    evaluations.run_evaluation(world.ctx, evaluation_id)

    evaluation = world.verity.get_evaluation(None, evaluation_id)
    assert evaluation.status == "Failed"
    assert evaluation.failure.startswith("The evaluator was still running 0 hours after it started, so the watchdog")


def test_a_merge_past_its_time_limit_is_stopped_by_the_watchdog(
    world: World, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(merge, "MERGE_TIME_LIMIT_SECONDS", 0)
    run_id = world.finished(str(tmp_path / "adapter"))
    world.verity.merge_run(world.org_id, run_id, OWNER, "owner")

    merge.merge(world.ctx, run_id)

    run = world.verity.get_run(None, run_id)
    assert run.merge["state"] == "failed"
    assert run.merge["message"] == merge.TOO_LONG.format(hours=0)
