"""SFT and DPO runs in the domain: their settings, their steps, their adapter, and RL starting from it."""

from __future__ import annotations

from uuid import UUID, uuid4

import pytest

from domain.actors import Actor
from domain.application import Verity
from domain.errors import IllegalTransition, SettingsInvalid
from domain.runs.progress import StepLog
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api

OWNER = Actor("person", "owner@localhost", "owner@localhost")


def world(plan: str = "free") -> tuple[Verity, UUID, UUID, dict[str, UUID]]:
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    org_id = verity.create_organization("Acme", plan, OWNER).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, False, OWNER).id
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id
    versions = {}
    for shape in ("messages", "preference"):
        versions[shape] = verity.record_dataset_version(
            org_id, dataset_id, version_id=uuid4(), storage_key=f"datasets/{shape}",
            split_counts={"train": 64, "validation": 16, "test": 0}, shape=shape, has_images=False, actor=OWNER,
        ).id
    return verity, org_id, project_id, versions


def body(objective: str, version: UUID | None, **block) -> dict:
    return {"name": objective, "dataset_version": str(version) if version else None,
            "training": {"objective": objective, objective: block}}


def test_sft_and_dpo_take_their_own_defaults_and_bounds():
    sft = run_body_from_api(body("sft", None))
    assert (sft.objective, sft.learning_rate, sft.epochs, sft.batch_size, sft.micro_batch_size) == (
        "sft", 0.0002, 3, 8, 8)
    dpo = run_body_from_api(body("dpo", None))
    assert (dpo.learning_rate, dpo.beta) == (0.000005, 0.1)
    saved = sft.to_api()
    assert saved["training"]["objective"] == "sft" and saved["training"]["sft"] == {"epochs": 3, "batch_size": 8}
    assert RunSettings.from_saved(saved) == sft
    with pytest.raises(SettingsInvalid) as refused:
        run_body_from_api({"training": {"objective": "sft", "sft": {"batch_size": 12, "epochs": 0}}})
    assert refused.value.errors == {  # every bad field at once
        "epochs": "Epochs must be a whole number from 1 to 100.",
        "batch_size": "Batch size must be a multiple of Micro batch size: each step adds up whole micro batches.",
    }


def test_an_sft_run_logs_steps_keeps_its_adapter_and_an_rl_run_starts_from_it():
    verity, org_id, project_id, versions = world()
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(body("sft", None)), OWNER)
    assert refused.value.errors == {
        "dataset_version": "SFT trains on a dataset version's examples: choose a Dataset version."}
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(body("dpo", versions["messages"])), OWNER)
    assert "DPO trains on preference pairs" in refused.value.errors["dataset_version"]

    draft = run_body_from_api({**body("sft", versions["messages"]), "training": {
        "objective": "sft", "advanced": {"lora_rank": 8, "lora_alpha": 16}}})
    run_id = verity.save_run(org_id, project_id, draft, OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "member")  # SFT launches on the Free plan
    verity.record_preparing(run_id)
    verity.record_step_logged(run_id, StepLog(1, 2, 0.5, 1.5, 0.2))
    assert verity.get_run(org_id, run_id).status == "Training · step 1 / 2"
    with pytest.raises(IllegalTransition):
        verity.record_step_logged(run_id, StepLog(1, 2, 0.5, 1.5, 0.2))
    verity.record_step_logged(run_id, StepLog(2, 2, 1.0, 0.9, 0.4, validation_loss=1.1))
    verity.record_saving_adapter(run_id)
    verity.record_adapter_ready(run_id, 2, f"runs/{run_id}/adapter", "ab" * 32, 1234)
    verity.record_completed(run_id)
    sft = verity.get_run(org_id, run_id)
    assert sft.status == "Completed" and sft.adapter["sha256"] == "ab" * 32 and len(sft.steps) == 2

    rl = run_body_from_api({"name": "rl", "training": {
        "rl": {"start_run": str(run_id), "reward": {"preset": "verifiable", "metric": "math_pairs"}}}})
    rl_id = verity.save_run(org_id, project_id, rl, OWNER).id
    advanced = verity.get_run(org_id, rl_id).settings
    assert (advanced.lora_rank, advanced.lora_alpha) == (8, 16)
    with pytest.raises(IllegalTransition):  # an RL run scores rounds
        verity.record_step_logged(rl_id, StepLog(1, 2, 0.5, 1.5, 0.2))
