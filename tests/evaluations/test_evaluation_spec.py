"""What an evaluation of a run's adapter hands the evaluator: the revision that run trained on, and the
organization's storage (where its runs' adapters are), with the storage's key only in the child's environment."""

from __future__ import annotations

from evaluation_helpers import OWNER, World

from jobs.context import JobContext
from jobs.evaluations import build_evaluation_spec, model_revision
from jobs.run_storage import run_storage
from verity.config import Settings


def _context(world: World, tmp_path) -> JobContext:
    return JobContext(settings=Settings(data_dir=tmp_path), verity=world.verity, ledger=None, config=None)  # type: ignore[arg-type]


def test_an_adapter_is_scored_on_the_revision_its_run_trained_on(world: World, tmp_path):
    baseline_id = world.completed(world.evaluation())
    run_id = world.finished_run(baseline=str(baseline_id), training={
        "model_revision": "abc1234", "rl": {"rounds": 1, "reward": None}})
    assert world.verity.get_run(world.org_id, run_id).settings.model_revision == "abc1234"
    scored = world.verity.score_against_baseline(world.org_id, run_id, OWNER).id
    ctx = _context(world, tmp_path)
    assert model_revision(ctx, world.verity.get_evaluation(world.org_id, scored)) == "abc1234"
    assert model_revision(ctx, world.verity.get_evaluation(world.org_id, baseline_id)) is None  # the project's: main


def test_an_evaluation_reads_and_writes_the_organizations_storage(world: World, tmp_path):
    world.verity.set_storage(world.org_id, {"kind": "s3", "bucket": "acme-runs", "prefix": "verity",
                                            "key_id": "AKIAEXAMPLE"}, None, OWNER, "owner")
    baseline_id = world.completed(world.evaluation())
    ctx = _context(world, tmp_path)
    storage = run_storage(ctx.settings, world.verity, world.org_id)
    spec = build_evaluation_spec(ctx, world.verity.get_evaluation(world.org_id, baseline_id), storage)
    assert spec.storage.location == "s3://acme-runs/verity"
    assert "AKIAEXAMPLE" not in str(spec.to_dict())  # the key goes by the environment, never the spec file
    assert storage.child_environment({"PATH": "/bin"})["AWS_ACCESS_KEY_ID"] == "AKIAEXAMPLE"
