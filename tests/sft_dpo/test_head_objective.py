"""Head (001's third Training method) in the domain and the console: SFT's data and settings with its own defaults,
the messages of its settings and of Start from, Retry and Duplicate, and the pages that name it."""

from __future__ import annotations

from uuid import UUID

import pytest
from consoles import default_organization
from dataset_versions import recorded_version
from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from domain.actors import Actor
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.runs.progress import RoundResult, StepLog
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def body(objective: str, version: UUID | str | None, name: str | None = None, **training) -> dict:
    return {"name": name or objective, "dataset_version": str(version) if version else None,
            "training": {"objective": objective, **training}}


def finished(verity: Verity, org_id: UUID, project_id: UUID, draft: RunSettings) -> UUID:
    """A saved run that trained two steps and kept its adapter."""
    run_id = verity.save_run(org_id, project_id, draft, OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "member")
    verity.record_preparing(run_id)
    verity.record_step_logged(run_id, StepLog(1, 2, 0.5, 1.5, 0.2))
    verity.record_step_logged(run_id, StepLog(2, 2, 1.0, 0.9, 0.4, validation_loss=1.1))
    verity.record_saving_adapter(run_id)
    verity.record_adapter_ready(run_id, 2, f"runs/{run_id}/adapter", "ab" * 32, 18_936)
    verity.record_completed(run_id)
    return run_id


def world(plan: str = "free") -> tuple[Verity, UUID, UUID, UUID]:
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    org_id = verity.create_organization("Acme", plan, OWNER).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, False, OWNER).id
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id
    version = recorded_version(verity, org_id, dataset_id, OWNER, storage_key="datasets/chats", train=64, validation=16)
    return verity, org_id, project_id, version


def test_head_takes_sft_settings_with_its_own_learning_rate_and_says_what_is_wrong_in_words():
    head = run_body_from_api(body("head", None))
    assert (head.objective, head.learning_rate, head.epochs, head.batch_size, head.micro_batch_size) == (
        "head", 0.001, 3, 8, 8)
    saved = head.to_api()
    assert saved["training"]["head"] == {"epochs": 3, "batch_size": 8} and "sft" not in saved["training"]
    assert RunSettings.from_saved(saved) == head
    assert run_body_from_api(body("head", None, advanced={"learning_rate": 0.0002})).learning_rate == 0.0002
    with pytest.raises(SettingsInvalid) as refused:
        run_body_from_api(body("head", None, head={"epochs": 0, "batch_size": 12}, advanced={"learning_rate": 0.01}))
    assert refused.value.errors == {  # every bad field at once
        "epochs": "Epochs must be a whole number from 1 to 100.",
        "batch_size": "Batch size must be a multiple of Micro batch size: each step adds up whole micro batches.",
        "learning_rate": "Learning rate must be a number from 1e-7 to 1e-3.",
    }

    verity, org_id, project_id, _ = world()
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(body("head", None)), OWNER)
    assert refused.value.errors == {
        "dataset_version": "Head trains on a dataset version's examples: choose a Dataset version."}


def test_a_head_run_trains_on_the_free_plan_and_rl_starts_from_its_adapter_while_sft_and_dpo_may_not():
    verity, org_id, project_id, version = world()
    draft = run_body_from_api(body("head", version, "head on chats", advanced={"lora_rank": 8, "lora_alpha": 16}))
    head_id = finished(verity, org_id, project_id, draft)
    head = verity.get_run(org_id, head_id)
    assert head.status == "Completed" and head.objective == "head" and head.adapter["size_bytes"] == 18_936

    rl = run_body_from_api({"name": "rl", "training": {"rl": {"start_run": str(head_id), "reward": MATH_PAIRS}}})
    rl_id = verity.save_run(org_id, project_id, rl, OWNER).id
    advanced = verity.get_run(org_id, rl_id).settings
    assert (advanced.lora_rank, advanced.lora_alpha) == (8, 16)  # the head's matrices fit the new adapter

    sft_message = (
        "SFT can't continue the adapter of “head on chats”: it trains the output head (a Head run's adapter, or one "
        "started from it), and SFT computes its loss from the head's own weight, so it would leave that part out. "
        "Start RL from it, or start SFT from the base model or another run."
    )
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(
            body("sft", version, rl={"start_run": str(head_id)})), OWNER)
    assert refused.value.errors == {"start_run": sft_message}

    sft_id = finished(verity, org_id, project_id, run_body_from_api(body("sft", version, "sft on chats")))
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(
            body("head", version, rl={"start_run": str(sft_id)})), OWNER)
    assert refused.value.errors == {"start_run": (
        "Head trains the output head alone, so it can only continue a Head run's adapter: “sft on chats” is an SFT "
        "run, whose adapter changes more than the head. Leave Start from empty to train a new head adapter."
    )}
    again = verity.save_run(org_id, project_id, run_body_from_api(
        body("head", version, rl={"start_run": str(head_id)})), OWNER).id
    assert verity.get_run(org_id, again).settings.start_run == str(head_id)


def test_an_rl_run_from_a_head_run_keeps_the_head_so_dpo_may_not_continue_it_either():
    verity, org_id, project_id, version = world(plan="pro")
    head_id = finished(verity, org_id, project_id, run_body_from_api(body("head", version, "head on chats")))
    rl_id = verity.save_run(org_id, project_id, run_body_from_api(
        {"name": "rl from head", "training": {"rl": {"rounds": 1, "start_run": str(head_id), "reward": MATH_PAIRS}}}
    ), OWNER).id
    verity.launch_run(org_id, rl_id, OWNER, "owner")
    verity.record_preparing(rl_id)
    verity.record_round_scored(rl_id, RoundResult(0, 0.3, validation_seconds=1.0))
    verity.record_round_scored(rl_id, RoundResult(1, 0.4, reward=0.4, signal=0.5, updated=True, loss=0.1))
    verity.record_saving_adapter(rl_id)
    verity.record_adapter_ready(rl_id, 1, f"runs/{rl_id}/adapter", "cd" * 32, 4_096)
    verity.record_completed(rl_id)
    with pytest.raises(SettingsInvalid) as refused:
        verity.save_run(org_id, project_id, run_body_from_api(
            body("dpo", version, rl={"start_run": str(rl_id)})), OWNER)
    assert refused.value.errors["start_run"].startswith(
        "DPO can't continue the adapter of “rl from head”: it trains the output head")


def test_retry_and_duplicate_keep_a_head_runs_settings():
    verity, org_id, project_id, version = world()
    head_id = verity.save_run(org_id, project_id, run_body_from_api(body("head", version)), OWNER).id
    verity.launch_run(org_id, head_id, OWNER, "member")
    verity.record_preparing(head_id)
    verity.record_failed(head_id, "The worker stopped.")
    retried = verity.retry_run(org_id, head_id, OWNER, "member").id  # Head launches on the Free plan, like SFT
    copy = verity.duplicate_run(org_id, head_id, OWNER).id
    original = verity.get_run(org_id, head_id).settings
    assert verity.get_run(org_id, retried).settings == original
    assert verity.get_run(org_id, copy).settings == original.with_values(name="head (copy)")  # Duplicate names the copy
    assert verity.get_run(org_id, retried).state == "queued" and verity.get_run(org_id, copy).state == "draft"


def test_the_console_names_head_runs_and_the_form_says_what_head_does(sqlite_settings):
    verity, read_models, org_id, project_id = default_organization(sqlite_settings)
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id
    version = recorded_version(verity, org_id, dataset_id, OWNER, storage_key="datasets/chats")
    run_id = finished(verity, org_id, project_id, run_body_from_api(body("head", version, "head on chats")))
    app = create_app(verity, read_models, runner=ProjectionRunner(verity, read_models), debug=True)
    with TestClient(app) as client:
        sign_in_as(client, verity, read_models, org_id)
        assert read_models.wait_for(verity.recorder.max_notification_id() or 0, timeout=10)
        assert "<td>Head</td>" in client.get("/runs").text
        page = client.get(f"/runs/{run_id}").text
        assert "<dt>Objective</dt>" in page and "<dd>Head</dd>" in page and "Steps done</dt><dd>2 of 2" in page
        timeline = [entry.sentence for entry in read_models.timeline(org_id, run_id)]
        assert any("saved the Head run draft “head on chats”" in sentence for sentence in timeline), timeline
        assert "The adapter of step 2 is ready: 18,936 bytes" in " ".join(timeline)

        options = client.get("/runs/new").text
        assert '<option value="head"' in options and "Head · train the output head only" in options
        summary = client.post("/runs/summary", headers=HTMX, data={
            "objective": "head", "kind": "full", "dataset_version": str(version), "epochs": "3", "batch_size": "8",
            "learning_rate": "0.001", "lora_rank": "16"}).text
        assert "Head · LoRA on the output head" in summary
        assert ("Trains the output head only: the rest of the model stays frozen. Fast and cheap; learns the "
                "answer&#39;s format and vocabulary, not new reasoning.") in summary
        assert "Rounds" not in summary and "Reward" not in summary
