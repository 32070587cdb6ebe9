"""What the worker trains on is what the console said: a Math Pairs run that names a dataset version makes its own
prompts (the version's rows are not used), and an SFT run whose micro batch is larger than its batch takes the
whole batch in one pass."""

from __future__ import annotations

from dataset_versions import speeds_version

from domain.actors import Actor
from domain.runs.settings import run_body_from_api
from jobs.specs import build_run_spec
from jobs.tune_specs import build_tune_spec

OWNER = Actor("person", "owner@localhost", "owner@localhost")


def launched(world, body: dict):
    run_id = world.verity.save_run(world.org_id, world.project_id, run_body_from_api(body), OWNER).id
    world.verity.launch_run(world.org_id, run_id, OWNER, "owner")
    return world.verity.get_run(world.org_id, run_id)


def test_math_pairs_on_a_dataset_version_trains_on_its_own_prompts(world, tmp_path):
    version = speeds_version(world, tmp_path)
    math_pairs = launched(world, {"dataset_version": version, "training": {"rl": {
        "rounds": 1, "reward": {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16}}}})
    spec = build_run_spec(world.verity, math_pairs, world.settings, world.ctx.config)
    assert len(spec.train_rows) == 16 and not any("km in 2 hours" in str(row.prompt) for row in spec.train_rows)

    numeric = launched(world, {"dataset_version": version, "training": {"rl": {
        "rounds": 1, "reward": {"preset": "numeric", "metric": "numeric_accuracy"}}}})
    spec = build_run_spec(world.verity, numeric, world.settings, world.ctx.config)
    assert [row.reference for row in spec.train_rows] == ["1", "2", "3", "4"]  # a reward that reads the version


def test_an_sft_micro_batch_larger_than_its_batch_takes_the_batch_in_one_pass(world, tmp_path):
    version = speeds_version(world, tmp_path)
    sft = launched(world, {"dataset_version": version, "training": {
        "objective": "sft", "sft": {"batch_size": 8}, "advanced": {"micro_batch_size": 32}}})
    spec = build_tune_spec(world.verity, sft, world.settings, world.ctx.config)
    assert (spec.batch_size, spec.micro_batch_size, spec.accumulation_steps) == (8, 8, 1)
