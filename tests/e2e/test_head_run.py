"""001's Head method as a user does it through the API on the embedded default: upload Math Pairs conversations,
train the model's output head alone on them, read the run like an SFT run (steps, the adapter with its checksum,
the Runs list, the feed), merge its adapter into a full checkpoint, and Start an RL run from it."""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from domain.rewards.math_pairs import math_pairs_problem

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow


def conversations(seed: int, count: int) -> bytes:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        question, answer = math_pairs_problem(rng)
        messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        lines.append(json.dumps({"messages": messages}) + "\n")
    return "".join(lines).encode()


def test_a_head_run_trains_the_output_head_keeps_its_adapter_merges_and_rl_starts_from_it(embedded: Site) -> None:
    chats = embedded.upload("math chats", conversations(seed=41, count=48), conversations(seed=42, count=16))
    body = {
        "name": "head on math chats",
        "dataset_version": chats,
        "training": {"objective": "head", "head": {"epochs": 2, "batch_size": 16},
                     "advanced": {"micro_batch_size": 16, "training_window": 128}},
    }
    answer = embedded.client.post("/api/runs", json=body)
    assert answer.status_code == 201, answer.text
    head = UUID(answer.json()["run"]["id"])
    assert answer.json()["run"]["settings"]["training"]["advanced"]["learning_rate"] == 0.001  # Head's default
    embedded.launch(head)

    run = embedded.wait_ended(head, timeout=180)
    assert run["state"] == "completed", run.get("failure")
    adapter = run["adapter"]
    weights = embedded.settings.local_storage_dir / adapter["location"] / "adapter_model.safetensors"
    assert weights.stat().st_size == adapter["size_bytes"] and len(adapter["sha256"]) == 64
    config = json.loads((weights.parent / "adapter_config.json").read_text())
    assert config["target_modules"] == ["lm_head"]
    steps = embedded.client.get(f"/api/runs/{head}/steps").json()
    assert [s["step"] for s in steps] == [6, 5, 4, 3, 2, 1]  # 48 examples / 16 x 2 epochs, newest first
    validation = [s["validation_loss"] for s in reversed(steps) if s["validation_loss"] is not None]
    assert len(validation) == 2 and validation[-1] < validation[0], validation

    listed = {UUID(row["id"]): row for row in embedded.client.get("/api/runs").json()}
    assert listed[head]["objective"] == "head" and listed[head]["steps_logged"] == 6
    assert "<td>Head</td>" in embedded.client.get("/runs").text

    assert embedded.client.post(f"/api/runs/{head}/merge").status_code == 202
    merge = embedded.wait(head, lambda r: r["merge"]["state"] != "merging", timeout=90)["merge"]
    assert merge["state"] == "merged", merge
    merged_config = json.loads((embedded.settings.local_storage_dir / merge["location"] / "config.json").read_text())
    assert merged_config["tie_word_embeddings"] is False  # the head's update did not reach the input embedding

    after_head = embedded.save(rounds=1, start_run=str(head))
    assert embedded.launch(after_head)["start_run"] == str(head)
    rl_run = embedded.wait_ended(after_head, timeout=180)
    assert rl_run["state"] == "completed", rl_run.get("failure")
    rl_config = json.loads(
        (embedded.settings.local_storage_dir / rl_run["adapter"]["location"] / "adapter_config.json").read_text()
    )
    assert "lm_head" in rl_config["target_modules"] and "q_proj" in rl_config["target_modules"]

    feed = embedded.client.get("/api/events", params={"limit": 1000}).json()["events"]
    saved = {UUID(e["aggregate_id"]): e["data"]["settings"]["training"]["objective"]
             for e in feed if e["type"] == "Run.Saved"}
    assert saved[head] == "head" and saved[after_head] == "rl"
    assert len([e for e in feed if e["type"] == "Run.StepLogged" and UUID(e["aggregate_id"]) == head]) == 6
    sentences = [entry["sentence"] for entry in embedded.timeline(head)]
    assert any("saved the Head run draft “head on math chats”" in sentence for sentence in sentences), sentences
