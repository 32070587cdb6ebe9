"""A run's newest timeline entries and their count read the same from every store as the whole timeline does."""

from __future__ import annotations

from projections.runner import ProjectionRunner
from projections.store import memory_read_models


def test_the_newest_entries_and_the_count_agree_with_the_whole_timeline(stack, round_result, owner):
    run_id = stack.save(rounds=8)
    stack.verity.launch_run(stack.org_id, run_id, owner, "owner")
    stack.verity.record_preparing(run_id)
    for number in range(6):
        stack.verity.record_round_scored(run_id, round_result(number, 0.3))
    stack.runner.run_once()
    in_memory = memory_read_models()
    ProjectionRunner(stack.verity, in_memory).run_once()
    for read_models in (stack.read_models, in_memory):
        every = read_models.timeline(stack.org_id, run_id)
        assert read_models.timeline_length(stack.org_id, run_id) == len(every) >= 8
        assert read_models.timeline(stack.org_id, run_id, 3) == every[-3:]
        assert read_models.timeline(stack.org_id, run_id, 100) == every
        assert read_models.timeline_length(stack.org_id, stack.project_id) == 0
