"""The production shape on one machine: PostgreSQL event store and read models, Redis as the broker, a separate
`verity worker` process serving the `local` provider, and storage reached with boto3 over HTTP on an S3-compatible
server. A trial and a full run launched through the API train for real and land in the event store and the bucket,
and Merge model, asked for through the API, is done by the separate worker and recorded on the run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3
import pytest

if TYPE_CHECKING:
    from conftest import Site

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def bucket_keys(site: Site, prefix: str) -> list[str]:
    s3 = boto3.client("s3", endpoint_url=site.settings.s3_endpoint_url)
    listing = s3.list_objects_v2(Bucket="verity-runs", Prefix=prefix)
    return sorted(item["Key"] for item in listing.get("Contents", []))


def test_a_trial_then_a_full_run_train_on_a_separate_worker_with_s3_storage(production: Site) -> None:
    trial_id = production.save(kind="trial", rounds=3)
    production.launch(trial_id)
    trial = production.wait_ended(trial_id)
    assert trial["state"] == "completed", trial.get("failure")
    report = trial["trial_report"]
    assert report["finished"] and report["seconds_per_round"] > 0
    assert report["full_training_rounds"] == 3 and report["full_gpu_cost"] is not None  # the worker's $0.5/hour
    trial_events = [entry["event_type"] for entry in production.timeline(trial_id)]
    assert trial_events == [
        "Saved", "Launched", "Queued", "Preparing", "RoundScored", "RoundScored", "TrialReported", "Completed"
    ]
    preparing = next(e for e in production.timeline(trial_id) if e["event_type"] == "Preparing")
    assert preparing["actor_name"].startswith("Worker ")

    run_id = production.save(rounds=2)
    production.launch(run_id)
    run = production.wait_ended(run_id)
    assert run["state"] == "completed", run.get("failure")
    adapter = run["adapter"]
    assert adapter["location"] == f"runs/{run_id}/adapter"  # its key in the storage: no bucket, no prefix
    prefix = f"org/runs/{run_id}/"
    keys = bucket_keys(production, prefix)
    assert f"{prefix}rollouts/round-001.jsonl" in keys and f"{prefix}rollouts/round-002.jsonl" in keys
    assert f"{prefix}adapter/adapter_model.safetensors" in keys
    head = boto3.client("s3", endpoint_url=production.settings.s3_endpoint_url).head_object(
        Bucket="verity-runs", Key=f"{prefix}adapter/adapter_model.safetensors"
    )
    assert head["ContentLength"] == adapter["size_bytes"]
    assert production.eventually(lambda: production.handle.ctx.ledger.leases() == [])  # the worker let go
    workers = production.handle.ctx.ledger.workers()
    assert [(w.queues, w.gpu, w.price_per_hour) for w in workers] == [(["local"], "CPU (tests)", 0.5)]

    # Merge model, asked for through the API, is done by the separate worker (the web process only sends it)
    asked = production.client.post(f"/api/runs/{run_id}/merge")
    assert asked.status_code == 202 and asked.json()["run"]["merge"]["state"] == "merging", asked.text
    merge = production.wait(run_id, lambda run: run["merge"]["state"] != "merging", timeout=90)["merge"]
    assert merge["state"] == "merged", merge
    merged = f"{prefix}merged/"
    assert merge["location"] == f"runs/{run_id}/merged/"
    assert f"{merged}merge.json" in bucket_keys(production, merged)
    assert f"{merged}model.safetensors" in bucket_keys(production, merged) and "model.safetensors" in merge["files"]
    ended = production.timeline(run_id)[-2:]
    assert [e["event_type"] for e in ended] == ["MergeRequested", "ModelMerged"]
    assert ended[1]["actor_name"].startswith("Worker ")
