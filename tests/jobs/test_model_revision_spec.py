"""The trainer pins the revision the run saved; a run saved before runs had one pins its project's. main goes as
None, the revision transformers loads of a hub id by default."""

from __future__ import annotations

from uuid import UUID

from domain.actors import Actor
from domain.runs.run import Run
from domain.runs.settings import run_body_from_api
from jobs.specs import build_run_spec

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}


def launched(world, revision: str | None, project_id: UUID | None = None) -> UUID:
    body = {"training": {"model_revision": revision, "rl": {"reward": MATH_PAIRS, "rounds": 1}}}
    run_id = world.verity.save_run(world.org_id, project_id or world.project_id, run_body_from_api(body), OWNER).id
    world.verity.launch_run(world.org_id, run_id, OWNER, "owner")
    return run_id


def pinned(world, run_id: UUID) -> str | None:
    run = world.verity.get_run(world.org_id, run_id)
    return build_run_spec(world.verity, run, world.settings, world.ctx.config).model.revision


def test_the_spec_pins_the_runs_own_revision(world):
    assert pinned(world, launched(world, "abc123")) == "abc123"
    assert pinned(world, launched(world, None)) is None  # the Demo project pins none: main
    pinned_project = world.verity.create_project(world.org_id, "Pinned", "tiny-math", "v2", False, OWNER).id
    assert pinned(world, launched(world, None, pinned_project)) == "v2"
    assert pinned(world, launched(world, "main", pinned_project)) is None  # main, typed over the project's v2


def test_a_run_saved_before_runs_had_a_revision_pins_its_projects(world):
    verity = world.verity
    project_id = verity.create_project(world.org_id, "Pinned", "tiny-math", "v2", False, OWNER).id
    settings = verity.get_run(world.org_id, launched(world, None, project_id)).settings
    old_settings = settings.with_values(model_revision=None)  # as a run saved before this setting existed reads
    old = Run(
        org_id=world.org_id, project_id=project_id, settings=old_settings, model="tiny-math", actor=OWNER.to_dict()
    )
    verity.save(old)
    verity.launch_run(world.org_id, old.id, OWNER, "owner")
    assert pinned(world, old.id) == "v2"
