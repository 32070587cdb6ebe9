"""000's recipe, "SFT first, then RL from that adapter", as a user does it through the API on the embedded default:
upload Math Pairs conversations and preference pairs, train an SFT run and a DPO run on them, then an RL run that
Starts from the SFT run's adapter. Its round 0 (the starting adapter, before any RL update) scores higher on
validation than an RL run from the base model; every run lands in the Runs list with its objective, and in the feed.
"""

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
# The tiny model learns Math Pairs answers from 128 conversations in 3 epochs at 1e-3, the most the form allows
# (real models: 2e-4).
TINY_TUNING = {"learning_rate": 1e-3, "micro_batch_size": 16, "training_window": 128}


def problems(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [math_pairs_problem(rng) for _ in range(count)]


def jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def conversations(seed: int, count: int) -> bytes:
    return jsonl([
        {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]}
        for question, answer in problems(seed, count)
    ])


def preference_pairs(seed: int, count: int) -> bytes:
    """The right sum is chosen, a sum off by one rejected."""
    return jsonl([
        {"prompt": question, "chosen": answer, "rejected": str(int(answer) + 1)}
        for question, answer in problems(seed, count)
    ])


def save_tuning(site: Site, name: str, objective: str, version_id: str, advanced: dict, **block: object) -> UUID:
    body = {
        "name": name,
        "dataset_version": version_id,
        "training": {"objective": objective, objective: block, "advanced": {**TINY_TUNING, **advanced}},
    }
    answer = site.client.post("/api/runs", json=body)
    assert answer.status_code == 201, answer.text
    return UUID(answer.json()["run"]["id"])


def round_zero_validation(feed: list[dict], run_id: UUID) -> float:
    """Round 0 scores the starting adapter (or the base model) on the validation sample, before any update."""
    return next(
        e["data"]["result"]["validation_reward"]
        for e in feed
        if e["type"] == "Run.RoundScored" and UUID(e["aggregate_id"]) == run_id
        and e["data"]["result"]["round_number"] == 0
    )


def test_sft_then_rl_from_its_adapter_and_a_dpo_run_all_in_the_runs_list_and_the_feed(embedded: Site) -> None:
    chats = embedded.upload("math chats", conversations(seed=21, count=128), conversations(seed=22, count=16))
    pairs = embedded.upload("math pairs", preference_pairs(seed=31, count=32), preference_pairs(seed=32, count=8))
    sft = save_tuning(embedded, "sft on math chats", "sft", chats, {}, epochs=3, batch_size=16)
    dpo = save_tuning(embedded, "dpo on math pairs", "dpo", pairs, {"learning_rate": 5e-4, "micro_batch_size": 8},
                      epochs=1, batch_size=8, beta=0.1)
    base = embedded.save(rounds=1)
    for run_id in (sft, dpo, base):
        embedded.launch(run_id)

    sft_run = embedded.wait_ended(sft, timeout=240)
    assert sft_run["state"] == "completed", sft_run.get("failure")
    assert len(sft_run["adapter"]["sha256"]) == 64 and sft_run["adapter"]["size_bytes"] > 0

    after_sft = embedded.save(rounds=1, start_run=str(sft))
    started = embedded.launch(after_sft)
    assert started["start_run"] == str(sft)

    dpo_run = embedded.wait_ended(dpo, timeout=240)
    assert dpo_run["state"] == "completed", dpo_run.get("failure")
    adapter = dpo_run["adapter"]
    weights = embedded.settings.local_storage_dir / adapter["location"] / "adapter_model.safetensors"
    assert weights.stat().st_size == adapter["size_bytes"] and len(adapter["sha256"]) == 64
    base_run, rl_run = embedded.wait_ended(base, timeout=240), embedded.wait_ended(after_sft, timeout=240)
    assert base_run["state"] == rl_run["state"] == "completed", (base_run.get("failure"), rl_run.get("failure"))
    feed = embedded.client.get("/api/events", params={"limit": 1000}).json()["events"]
    from_sft, from_base = round_zero_validation(feed, after_sft), round_zero_validation(feed, base)
    assert from_sft > from_base, (from_sft, from_base)

    listed = {UUID(row["id"]): row for row in embedded.client.get("/api/runs").json()}
    assert [listed[run_id]["objective"] for run_id in (sft, dpo, after_sft, base)] == ["sft", "dpo", "rl", "rl"]
    assert listed[sft]["steps_logged"] == listed[sft]["steps_total"] == 24  # 128 examples / 16 x 3 epochs
    steps = embedded.client.get(f"/api/runs/{sft}/steps").json()
    assert [s["step"] for s in steps] == list(range(24, 0, -1)) and steps[0]["loss"] < steps[-1]["loss"]
    assert [s["validation_loss"] is not None for s in steps].count(True) == 3  # one validation an epoch
    page = embedded.client.get("/runs")
    assert page.status_code == 200 and all(word in page.text for word in ("SFT", "DPO", "RL"))

    saved = {UUID(e["aggregate_id"]): e["data"]["settings"]["training"]["objective"]
             for e in feed if e["type"] == "Run.Saved"}
    assert saved[sft] == "sft" and saved[dpo] == "dpo" and saved[after_sft] == "rl"
    logged = [e for e in feed if e["type"] == "Run.StepLogged" and UUID(e["aggregate_id"]) == sft]
    assert len(logged) == 24
    ready = {UUID(e["aggregate_id"]) for e in feed if e["type"] == "Run.AdapterReady"}
    assert {sft, dpo, after_sft} <= ready
