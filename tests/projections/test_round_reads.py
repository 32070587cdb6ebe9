"""What a run page's parts read of a run's rounds (app/runs/round_views.py) reads the same from every store as the
rounds' whole rows do: the newest rows, their count, and the figures of a chart alone, from a round on."""

from __future__ import annotations

from app.runs.round_points import METRIC_FIGURES, REWARD_FIGURES
from projections.runner import ProjectionRunner
from projections.store import memory_read_models


def test_the_newest_rows_the_count_and_the_figures_agree_with_the_whole_rows(stack, round_result, owner):
    run_id = stack.save(rounds=8)
    stack.verity.launch_run(stack.org_id, run_id, owner, "owner")
    stack.verity.record_preparing(run_id)
    for number in range(7):
        stack.verity.record_round_scored(run_id, round_result(number, 0.3 + number / 10))
    stack.runner.run_once()
    in_memory = memory_read_models()
    ProjectionRunner(stack.verity, in_memory).run_once()
    org = stack.org_id
    for read_models in (stack.read_models, in_memory):
        every = read_models.rounds(org, run_id)  # newest first
        assert [r.round_number for r in every] == [6, 5, 4, 3, 2, 1, 0] and read_models.round_count(org, run_id) == 7
        assert read_models.rounds(org, run_id, newest=3) == every[:3]
        assert read_models.rounds(org, run_id, after=4, newest=50) == every[:2]
        for figures in (REWARD_FIGURES, METRIC_FIGURES):
            whole = {name: [getattr(row, name) for row in reversed(every)] for name in figures}  # oldest first
            assert read_models.round_figures(org, run_id, figures) == whole and list(whole) == list(figures)
            assert read_models.round_figures(org, run_id, figures, after=4) == {
                name: values[5:] for name, values in whole.items()}
            assert read_models.round_figures(org, run_id, figures, after=6) == {name: [] for name in figures}
        assert read_models.round_seconds(org, run_id, after=4) == [(r.round_number, r.seconds) for r in every[1::-1]]
        assert read_models.round_count(org, stack.save(name="none")) == 0
