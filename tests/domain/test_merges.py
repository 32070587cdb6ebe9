"""Merge model as events on the run: asked for once the adapter is ready, then merged or failed, in words."""

from __future__ import annotations

import pytest

from domain.actors import Actor
from domain.errors import IllegalTransition, NotAllowed
from domain.runs import merge

OWNER = Actor("person", "owner@localhost", "owner@localhost")
WORKER = Actor("system", "worker:1", "Worker 1")


def test_a_merge_is_asked_for_then_recorded_with_where_the_checkpoint_is(world) -> None:
    run_id = world.adapter_ready()
    world.verity.merge_run(world.org_id, run_id, OWNER, "member")
    run = world.verity.get_run(world.org_id, run_id)
    assert run.merge == {"state": merge.MERGING, "best_round": run.adapter["best_round"]}
    with pytest.raises(IllegalTransition, match="already being merged"):
        world.verity.merge_run(world.org_id, run_id, OWNER, "owner")

    world.verity.record_model_merged(run_id, f"runs/{run_id}/merged", ["config.json", "model.safetensors"], 99, WORKER)
    run = world.verity.get_run(world.org_id, run_id)
    assert run.merge["state"] == merge.MERGED and run.merge["size_bytes"] == 99
    assert run.state == "adapter_ready"  # merging changes nothing of how the run ended
    with pytest.raises(IllegalTransition) as refused:
        world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    assert refused.value.message == merge.already_merged(f"runs/{run_id}/merged")
    with pytest.raises(IllegalTransition, match="No merge of this run is under way"):
        world.verity.record_merge_failed(run_id, "late", WORKER)


def test_a_failed_merge_says_why_and_may_be_asked_for_again(world) -> None:
    run_id = world.adapter_ready()
    world.verity.record_completed(run_id)
    world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    world.verity.record_merge_failed(run_id, "The merge failed: OSError: disk full.", WORKER)
    run = world.verity.get_run(world.org_id, run_id)
    assert run.merge["state"] == merge.MERGE_FAILED and run.merge["message"] == "The merge failed: OSError: disk full."
    world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    assert world.verity.get_run(world.org_id, run_id).merge["state"] == merge.MERGING


@pytest.mark.parametrize("state", ["draft", "training", "failed"])
def test_only_a_run_with_its_adapter_ready_is_merged(world, state) -> None:
    run_id = {"draft": world.saved, "training": lambda: world.training(rounds_scored=2)}.get(state, world.launched)()
    if state == "failed":
        world.verity.record_failed(run_id, "boom")
    with pytest.raises(IllegalTransition) as refused:
        world.verity.merge_run(world.org_id, run_id, OWNER, "owner")
    assert refused.value.message == merge.NOT_READY
    assert world.verity.get_run(world.org_id, run_id).merge is None


def test_a_viewer_may_not_merge_and_nothing_is_recorded(world) -> None:
    run_id = world.adapter_ready()
    version = world.verity.get_run(world.org_id, run_id).version
    with pytest.raises(NotAllowed, match="member or owner role"):
        world.verity.merge_run(world.org_id, run_id, OWNER, "viewer")
    assert world.verity.get_run(world.org_id, run_id).version == version


def test_a_merge_ends_only_once_it_was_asked_for(world) -> None:
    run_id = world.adapter_ready()
    with pytest.raises(IllegalTransition, match="No merge of this run is under way"):
        world.verity.record_model_merged(run_id, "x", [], 0, WORKER)
