"""The Merge model job records how the merge went: a merge that fails says why in one sentence (its error line,
never a traceback), a message delivered twice does nothing, and on the embedded default a merge that a restart
lost ends in words instead of staying "on its way"."""

from __future__ import annotations

import pytest

from jobs import merge as merge_job
from projections.runner import ProjectionRunner
from tests.jobs.conftest import OWNER, World
from verity.wiring import build_read_models


@pytest.mark.parametrize("missing", ["adapter", "model"])
def test_a_merge_that_fails_records_why_in_one_sentence(world: World, tmp_path, tiny_model_dir, missing) -> None:
    adapter = world.settings.local_storage_dir / "runs" / "gone" / "adapter"  # where the trainer would have saved it
    if missing == "adapter":  # the base model is there (the project's tiny model), its adapter is not
        world.settings.models_dir.mkdir(parents=True, exist_ok=True)
        world.settings.tiny_model_dir.symlink_to(tiny_model_dir, target_is_directory=True)
    run_id = world.finished(str(adapter))
    world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    merge_job.merge(world.ctx, run_id)
    run = world.verity.get_run(None, run_id)
    assert run.merge["state"] == "failed", run.merge
    reason = (
        "the adapter is not in the storage at runs/gone/adapter." if missing == "adapter"  # its key, not the path
        else f"the base model {world.settings.tiny_model_dir} is not on this worker."
    )
    assert run.merge["message"] == merge_job.merge_failed_message(reason)
    assert run.merge["message"].startswith("The merge failed: ")
    assert run.state == "completed"  # the run's own ending is untouched
    assert not (world.settings.local_storage_dir / "runs" / str(run_id) / "merged" / "merge.json").exists()


def test_a_merge_message_delivered_again_after_the_merge_ended_does_nothing(world: World, tmp_path) -> None:
    run_id = world.finished(str(tmp_path / "adapter"))
    merge_job.merge(world.ctx, run_id)  # never asked for
    assert world.verity.get_run(None, run_id).merge is None
    world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    world.verity.record_merge_failed(run_id, "first try failed", OWNER)
    version = world.verity.get_run(None, run_id).version
    merge_job.merge(world.ctx, run_id)  # the first try's message, delivered twice
    assert world.verity.get_run(None, run_id).version == version


def test_a_merge_lost_at_a_restart_of_the_embedded_console_ends_in_words(world: World, tmp_path) -> None:
    run_id = world.finished(str(tmp_path / "adapter"))
    other = world.finished(str(tmp_path / "other"))
    world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    read_models = build_read_models(world.settings)
    ProjectionRunner(world.verity, read_models).run_once()  # caught up, as at start-up
    world.ctx.read_models = read_models
    assert read_models.merging_runs() == [run_id]

    assert merge_job.fail_merges_lost_at_restart(world.ctx) == [run_id]
    run = world.verity.get_run(None, run_id)
    assert run.merge["state"] == "failed" and run.merge["message"] == merge_job.LOST_AT_RESTART
    assert world.verity.get_run(None, other).merge is None
