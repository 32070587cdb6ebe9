"""A run pins a model revision (000: "the model revision work as for other runs"), and Start from continues only
an adapter trained on the revision the new run pins: "saving refuses one that didn't"."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from domain.errors import SettingsInvalid
from domain.runs.run import Run
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api, run_body_from_form

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def rl_draft(revision: str | None = None, **rl: Any) -> RunSettings:
    return run_body_from_api(
        {"name": "math", "training": {"model_revision": revision, "rl": {"reward": MATH_PAIRS, **rl}}}
    )


@pytest.fixture
def finished(world, owner, scored):
    """Drives a saved full run to Adapter ready (round 0, then one round)."""

    def finish(run_id: UUID) -> UUID:
        verity = world.verity
        verity.launch_run(world.org_id, run_id, owner, "member")
        verity.record_preparing(run_id)
        verity.record_round_scored(run_id, scored(0, 0.3))
        verity.record_round_scored(run_id, scored(1, 0.35))
        verity.record_saving_adapter(run_id)
        run = verity.get_run(world.org_id, run_id)
        verity.record_adapter_ready(run_id, run.best_round, f"runs/{run_id}/adapter", "ab" * 32, 1234)
        return run_id

    return finish


def saved_with(world, owner, revision: str | None = None, **rl: Any) -> UUID:
    return world.verity.save_run(world.org_id, world.project_id, rl_draft(revision, rounds=1, **rl), owner).id


def refusal(world, owner, draft: RunSettings) -> str:
    with pytest.raises(SettingsInvalid) as refused:
        world.verity.save_run(world.org_id, world.project_id, draft, owner)
    return refused.value.errors["start_run"]


def test_model_revision_is_a_run_setting_of_the_api_body_and_the_form():
    assert rl_draft("abc123").model_revision == "abc123"
    assert rl_draft("abc123").to_api()["training"]["model_revision"] == "abc123"
    assert run_body_from_api({}).model_revision is None
    assert run_body_from_form({"model_revision": "  v1.0  "}).model_revision == "v1.0"
    assert run_body_from_form({"model_revision": ""}).model_revision is None


def test_a_saved_run_holds_the_revision_it_will_pin(world, owner):
    def pinned(revision: str | None) -> str:
        run = world.verity.get_run(world.org_id, saved_with(world, owner, revision))
        return run.settings.model_revision

    assert pinned("abc123") == "abc123"
    assert pinned(None) == "main"  # the project pins none
    project_id = world.verity.create_project(world.org_id, "Pinned", "tiny-math", "v2", False, owner).id
    draft = rl_draft(None)
    run = world.verity.get_run(world.org_id, world.verity.save_run(world.org_id, project_id, draft, owner).id)
    assert run.settings.model_revision == "v2"


def test_start_from_refuses_a_run_trained_on_another_revision_and_accepts_the_same(world, owner, finished):
    on_main = finished(saved_with(world, owner, None, lora_rank=8, lora_alpha=16))
    assert refusal(world, owner, rl_draft("abc123", start_run=str(on_main))) == (
        "Start from must be a run trained on revision abc123 of the model: that run trained main."
    )
    same = world.verity.save_run(world.org_id, world.project_id, rl_draft("main", start_run=str(on_main)), owner)
    advanced = world.verity.get_run(world.org_id, same.id).settings
    assert (advanced.lora_rank, advanced.lora_alpha) == (8, 16)

    on_abc = finished(saved_with(world, owner, "abc123"))
    assert refusal(world, owner, rl_draft(None, start_run=str(on_abc))) == (
        "Start from must be a run trained on revision main of the model: that run trained abc123."
    )
    world.verity.save_run(world.org_id, world.project_id, rl_draft("abc123", start_run=str(on_abc)), owner)


def test_an_sft_draft_is_refused_a_source_on_another_revision_too(world, owner, finished):
    on_abc = finished(saved_with(world, owner, "abc123"))
    sft = run_body_from_api(
        {"training": {"objective": "sft", "model_revision": "def456", "rl": {"start_run": str(on_abc)}}}
    )
    with pytest.raises(SettingsInvalid) as refused:
        world.verity.save_run(world.org_id, world.project_id, sft, owner)
    assert refused.value.errors["start_run"] == (
        "Start from must be a run trained on revision def456 of the model: that run trained abc123."
    )


def test_a_run_saved_before_runs_had_a_revision_counts_as_the_projects(world, owner, finished):
    verity = world.verity
    project_id = verity.create_project(world.org_id, "Pinned", "tiny-math", "v2", False, owner).id
    settings = rl_draft(None, rounds=1).with_values(reward={**MATH_PAIRS, "format_bonus": True}).to_api()
    del settings["training"]["model_revision"]  # as saved before this setting existed
    old = Run(org_id=world.org_id, project_id=project_id, settings=RunSettings.from_saved(settings), model="tiny-math",
              actor=owner.to_dict())
    verity.save(old)
    finished(old.id)

    verity.save_run(world.org_id, project_id, rl_draft(None, start_run=str(old.id)), owner)  # the project's v2
    verity.save_run(world.org_id, project_id, rl_draft("v2", start_run=str(old.id)), owner)
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(world.org_id, project_id, rl_draft("main", start_run=str(old.id)), owner)
    assert refused.value.errors["start_run"].endswith("that run trained v2.")
