"""What goes wrong across machines: a worker killed in the middle of a round, and the broker restarting while a run
trains. PostgreSQL, Redis, a separate `verity worker` process and S3 over HTTP, as in production."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

import boto3
import pytest

if TYPE_CHECKING:
    from conftest import Site

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_a_worker_killed_mid_round_leaves_no_run_stuck(production: Site) -> None:
    run_id = production.save(rounds=40)
    production.launch(run_id)
    production.wait_training(run_id, round_number=2)
    worker = production.children[0]

    os.kill(worker.pid, signal.SIGKILL)  # the machine's worker is gone; its trainer goes with it

    run = production.wait_ended(run_id, timeout=60)
    assert run["state"] == "failed"  # with Retry
    assert "stopped sending heartbeats" in run["failure"] and "the reconciler ended the run" in run["failure"]
    last = production.timeline(run_id)[-1]
    assert (last["event_type"], last["actor_name"]) == ("Failed", "Reconciler")
    # nothing is lost: every round scored before the worker died is still in the run and in the bucket
    scored = run["rounds_done"]
    assert scored >= 1
    s3 = boto3.client("s3", endpoint_url=production.settings.s3_endpoint_url)
    keys = {item["Key"] for item in s3.list_objects_v2(Bucket="verity-runs", Prefix="org/runs/")["Contents"]}
    for number in range(1, scored + 1):
        assert f"org/runs/{run_id}/rollouts/round-{number:03d}.jsonl" in keys
    assert production.eventually(lambda: production.handle.ctx.ledger.leases() == [])
