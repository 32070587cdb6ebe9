"""The Runs list tells RL, SFT and DPO runs apart, counts SFT steps, and a rebuild reproduces it exactly."""

from __future__ import annotations

from uuid import uuid4

import pytest
from consoles import default_organization
from dataset_versions import recorded_version

from domain.actors import Actor
from domain.errors import SettingsInvalid
from domain.runs.progress import RoundResult, StepLog
from domain.runs.settings import run_body_from_api
from projections.rebuild import rebuild_all
from projections.runner import ProjectionRunner

OWNER = Actor("person", "owner@localhost", "owner@localhost")


def test_the_runs_list_shows_each_objective_and_an_sft_runs_steps(sqlite_settings):
    verity, read_models, org_id, project_id = default_organization(sqlite_settings)
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id
    messages_version = recorded_version(verity, org_id, dataset_id, OWNER, storage_key="datasets/m")
    pairs_version = recorded_version(verity, org_id, dataset_id, OWNER, storage_key="datasets/p", shape="preference")

    def save(body: dict) -> object:
        return verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id

    sft = save({"name": "sft", "dataset_version": str(messages_version), "training": {"objective": "sft"}})
    save({"name": "dpo", "dataset_version": str(pairs_version), "training": {"objective": "dpo"}})
    rl = save({"name": "rl", "training": {"rl": {"rounds": 3, "reward": {"preset": "verifiable",
                                                                             "metric": "math_pairs"}}}})
    verity.launch_run(org_id, sft, OWNER, "member")
    verity.record_preparing(sft)
    verity.record_step_logged(sft, StepLog(1, 4, 0.25, 2.0, 1.0))
    verity.record_step_logged(sft, StepLog(2, 4, 0.5, 1.5, 2.0, validation_loss=1.4))
    verity.launch_run(org_id, rl, OWNER, "owner")
    verity.record_preparing(rl)
    verity.record_round_scored(rl, RoundResult(0, 0.3, validation_seconds=1.0))
    runner = ProjectionRunner(verity, read_models)
    events = runner.run_once()

    rows = {row.name: row for row in read_models.runs(org_id)}
    assert [(rows[n].objective, rows[n].reward_label) for n in ("sft", "dpo", "rl")] == [
        ("sft", ""), ("dpo", ""), ("rl", "Math Pairs · Verifiable")
    ]
    assert (rows["sft"].status_line, rows["sft"].steps_logged, rows["sft"].steps_total) == (
        "Training · step 2 / 4", 2, 4
    )
    assert read_models.run(org_id, sft).status_line == "Training · step 2 / 4"
    assert [(s.step, s.loss, s.validation_loss) for s in read_models.steps(org_id, sft)] == [
        (2, 1.5, 1.4), (1, 2.0, None)
    ]
    assert rows["dpo"].steps_total is None and rows["rl"].objective == "rl"

    live = read_models.dump()
    assert len(live["run_steps"]) == 2
    assert rebuild_all(sqlite_settings) >= events
    assert read_models.dump() == live


def test_an_sft_run_speaks_of_steps_and_its_last_steps_adapter(sqlite_settings):
    verity, read_models, org_id, project_id = default_organization(sqlite_settings)
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id

    def version(validation: int) -> object:
        key = f"datasets/{uuid4()}"
        return recorded_version(verity, org_id, dataset_id, OWNER, storage_key=key, validation=validation)

    no_validation = version(0)
    body = {"name": "sft", "dataset_version": str(no_validation), "training": {"objective": "sft"}}
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(body), OWNER)
    assert refused.value.errors == {
        "dataset_version": "SFT needs training and validation examples; math v1 has no validation examples."
    }

    body["dataset_version"] = str(version(2))
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "member")
    verity.record_preparing(run_id)
    verity.record_step_logged(run_id, StepLog(1, 4, 0.25, 2.0, 1.0))
    verity.record_step_logged(run_id, StepLog(2, 4, 0.5, 1.5, 2.0, validation_loss=1.4))
    verity.record_stopped(run_id, "time_limit", "The time limit of 2 hours came first.")
    verity.record_adapter_ready(run_id, 2, f"runs/{run_id}/adapter", "ab" * 32, 2048)
    ProjectionRunner(verity, read_models).run_once()

    run = read_models.run(org_id, run_id)
    assert run.ended == "Stopped after step 2: time limit · adapter of step 2"
    assert run.stop_log_line == "SFT stopped (time_limit) after step 2; kept the adapter of step 2."
    assert run.kept_starting_adapter is None
    sentences = [entry.sentence for entry in read_models.timeline(org_id, run_id)]
    assert sentences[0] == "owner@localhost saved the SFT run draft “sft”."
    assert "Step 2 of 4: loss 1.5000, validation loss 1.4000." in sentences
    assert sentences[-1] == "The adapter of step 2 is ready: 2,048 bytes, SHA-256 abababababab."
    assert "Stopped after step 2: time limit · adapter of step 2. The time limit of 2 hours came first." in sentences
