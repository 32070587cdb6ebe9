"""The embedded default, as a new user runs it: a run launched in the console really trains on the tiny model,
and every step of it lands in the event store, the read models and the storage folder."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow


def test_a_full_run_trains_every_round_and_keeps_its_best_adapter(embedded: Site) -> None:
    run_id = embedded.save(rounds=2)
    launched = embedded.launch(run_id)
    assert launched["state"] in ("queued", "preparing")  # the in-process worker may already have it

    run = embedded.wait_ended(run_id)

    assert run["state"] == "completed", run.get("failure")
    assert run["rounds_done"] == 2
    adapter = run["adapter"]
    assert adapter["best_round"] == run["best_round"]
    assert adapter["location"] == f"runs/{run_id}/adapter"  # its key in the storage, not the server's path
    weights = embedded.settings.local_storage_dir / adapter["location"] / "adapter_model.safetensors"
    assert weights.stat().st_size == adapter["size_bytes"] and len(adapter["sha256"]) == 64
    storage = embedded.settings.local_storage_dir / "runs" / str(run_id) / "rollouts"
    files = sorted(path.name for path in storage.iterdir())
    assert files == ["round-001.jsonl", "round-002.jsonl"]
    first = json.loads((storage / "round-001.jsonl").read_text().splitlines()[0])
    assert "prompt" in first and "reference" in first

    events = [entry["event_type"] for entry in embedded.timeline(run_id)]
    assert events == [
        "Saved", "Launched", "Queued", "Preparing", "RoundScored", "RoundScored", "RoundScored",
        "SavingAdapter", "AdapterReady", "Completed",
    ]
    rounds = embedded.client.get(f"/api/runs/{run_id}/rounds")
    if rounds.status_code == 200:  # the rounds endpoint is the console's; its log lines are the product's
        assert rounds.json()[0]["log_line"].startswith("Round 2 of 2: reward ")


def test_a_trial_runs_one_round_and_reports_its_measures(embedded: Site) -> None:
    trial_id = embedded.save(kind="trial", rounds=20)
    embedded.launch(trial_id)

    trial = embedded.wait_ended(trial_id)

    assert trial["state"] == "completed", trial.get("failure")
    assert trial["rounds_done"] == 1
    report = trial["trial_report"]
    assert report["finished"] and report["full_training_rounds"] == 20
    assert report["formatting"] == "8 of 8 prompts well formed"
    assert report["full_gpu_cost"] is None  # the embedded worker declares no price
    assert any("The estimate holds" in line for line in report["advice"])
    assert [e["event_type"] for e in embedded.timeline(trial_id)][-2:] == ["TrialReported", "Completed"]


def test_a_run_launched_but_never_started_goes_back_on_its_queue_when_the_server_starts_again(
    embedded: Site,
) -> None:
    from jobs.service import start

    embedded.handle.stop()  # the server stops: its in-memory queue, and the message on it, are gone
    run_id = embedded.save(rounds=1)
    embedded.launch(run_id)
    assert embedded.run(run_id)["state"] == "queued"

    restarted = start(embedded.settings, embedded.app_verity, embedded.read_models, config=embedded.handle.ctx.config)
    try:
        run = embedded.wait_ended(run_id)
    finally:
        restarted.stop()

    assert run["state"] == "completed", run.get("failure")
    queued = [e for e in embedded.timeline(run_id) if e["event_type"] == "Queued"]
    assert len(queued) == 2  # put on the queue at launch, and again at start-up


def test_start_from_continues_a_finished_runs_adapter_checked_by_its_checksum_and_size(embedded: Site) -> None:
    source_id = embedded.save(rounds=1, advanced={"lora_rank": 8, "lora_alpha": 16})
    embedded.launch(source_id)
    source = embedded.wait_ended(source_id)
    assert source["state"] == "completed", source.get("failure")

    continued_id = embedded.save(rounds=1, start_run=str(source_id))
    continued = embedded.run(continued_id)
    assert continued["settings"]["training"]["advanced"]["lora_rank"] == 8  # the source's rank and alpha apply
    embedded.launch(continued_id)
    assert embedded.wait_ended(continued_id)["state"] == "completed"

    weights = embedded.settings.local_storage_dir / source["adapter"]["location"] / "adapter_model.safetensors"
    stored = weights.read_bytes()
    weights.write_bytes(stored[:-1] + bytes([stored[-1] ^ 0xFF]))  # the stored adapter no longer matches its checksum
    tampered_id = embedded.save(rounds=1, start_run=str(source_id))
    embedded.launch(tampered_id)
    tampered = embedded.wait_ended(tampered_id)
    assert tampered["state"] == "failed"
    assert tampered["failure"] == "The adapter to start from does not match the checksum and size saved with its run."


def test_a_run_on_a_dataset_version_trains_on_its_rows_from_the_storage(embedded: Site) -> None:
    import json as json_
    import uuid

    from domain.actors import Actor
    from domain.rewards.verifiable import math_pairs_rows
    from verity.storage import dataset_version_key, open_storage, split_key

    verity, owner = embedded.app_verity, Actor("person", "owner@localhost", "owner@localhost")
    org_id = embedded.read_models.organizations()[0].id
    dataset_id = verity.create_dataset(org_id, "sums", owner).id
    version_id = uuid.uuid4()
    storage = open_storage(embedded.settings)
    train, validation = math_pairs_rows("dataset", 16, validation_count=8)
    for split, rows in (("train", train), ("validation", validation)):
        staged = storage.stage(split_key(dataset_version_key(version_id), split))
        staged.write("".join(json_.dumps(row) + "\n" for row in rows).encode())
        staged.commit()
    verity.record_dataset_version(
        org_id, dataset_id, version_id=version_id, storage_key=dataset_version_key(version_id),
        split_counts={"train": 16, "validation": 8, "test": 0}, shape="messages", has_images=False, actor=owner,
    )
    run_id = embedded.save(rounds=1, reward={"preset": "numeric", "metric": "numeric_accuracy"},
                           dataset_version=str(version_id))
    embedded.launch(run_id)

    run = embedded.wait_ended(run_id)

    assert run["state"] == "completed", run.get("failure")
    rollout = storage.read_lines(f"runs/{run_id}/rollouts/round-001.jsonl")
    questions = {row["prompt"][-1]["content"] for row in train}
    assert json_.loads(next(iter(rollout)))["prompt"][-1]["content"] in questions


def test_a_run_with_epochs_2_makes_two_passes_a_round_and_shows_what_the_clip_held_back(embedded: Site) -> None:
    run_id = embedded.save(rounds=2, epochs=2, advanced={"clip_high": 0.28, "max_grad_norm": 0.5})
    saved = embedded.run(run_id)["settings"]["training"]
    assert saved["rl"]["epochs"] == 2
    assert (saved["advanced"]["clip_high"], saved["advanced"]["max_grad_norm"]) == (0.28, 0.5)
    embedded.launch(run_id)

    run = embedded.wait_ended(run_id)

    assert run["state"] == "completed", run.get("failure")
    rounds = list(csv.DictReader(io.StringIO(embedded.client.get(f"/runs/{run_id}/rounds.csv").text)))
    trained = [r for r in rounds if r["round_number"] != "0"]
    assert len(trained) == 2
    for row in trained:
        assert row["updated"] == "True", row  # 8 prompts x 4 answers of an untrained model: some answers differ
        assert 0.0 <= float(row["clipped"]) <= 1.0 and float(row["grad_norm"]) > 0
        assert f"updated in 2 passes (clipped {round(float(row['clipped']) * 100)}%)" in row["log_line"]
    page = embedded.client.get(f"/runs/{run_id}").text
    assert "2 passes a round, ratio clipped to 0.8-1.28" in page
    assert "Clipped" in page and "Gradient norm" in page  # the RL metrics' small charts


def test_the_metrics_after_a_real_run_count_its_rounds_phases_requests_and_the_worker(embedded: Site) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    run_id = embedded.save(rounds=2)
    embedded.launch(run_id)
    assert embedded.wait_ended(run_id)["state"] == "completed"

    text = embedded.client.get("/-/metrics").text
    metrics = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}

    assert metrics[("verity_runs", (("state", "completed"),))] == 1
    assert metrics[("verity_rounds_finished_total", ())] == 2
    for phase in ("sampling", "grading", "update", "validation"):
        assert metrics[("verity_round_phase_seconds_total", (("phase", phase),))] > 0
    assert metrics[("verity_queue_waiting", (("queue", "local"),))] == 0
    assert metrics[("verity_queue_workers", (("queue", "local"),))] == 1  # the embedded worker, beating
    polled = [value for (name, labels), value in metrics.items() if name == "verity_http_requests_total"
              and ("path", "/api/runs/{run_id}") in labels and ("status_code", "200") in labels]
    assert polled and polled[0] >= 2  # wait_ended polled the run's detail
    assert embedded.client.get("/readyz").json()["checks"]["broker"] == "ok"
