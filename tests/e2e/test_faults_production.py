"""What goes wrong across machines: a worker killed in the middle of a round (the run resumes on another worker
from its last finished round), and the broker restarting while a run trains. PostgreSQL, Redis, a separate
`verity worker` process and S3 over HTTP, as in production."""

from __future__ import annotations

import os
import re
import signal
from typing import TYPE_CHECKING

import boto3
import pytest

if TYPE_CHECKING:
    from conftest import Site

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_a_worker_killed_mid_round_resumes_on_another_worker_from_its_last_round(production: Site, tmp_path) -> None:
    run_id = production.save(rounds=4)
    production.launch(run_id)
    production.wait_training(run_id, round_number=2)
    worker = production.children[0]

    os.kill(worker.pid, signal.SIGKILL)  # the machine's worker is gone; its trainer goes with it
    production.add_worker(log_path=tmp_path / "second-worker.log")

    run = production.wait_ended(run_id, timeout=150)
    assert run["state"] == "completed", run.get("failure")
    assert run["rounds_done"] == 4  # one run, every round once: the rounds after the checkpoint were redone
    timeline = production.timeline(run_id)
    resumed = [e for e in timeline if e["event_type"] == "Resumed"]
    assert len(resumed) == 1 and resumed[0]["actor_name"] == "Reconciler"
    assert re.fullmatch(r"The worker running this run \(.+, process \d+\) stopped after round (\d); the run went "
                        r"back on its queue to resume from round \1\.", resumed[0]["sentence"])
    stopped_after = int(re.search(r"round (\d)", resumed[0]["sentence"]).group(1))
    after = timeline[timeline.index(resumed[0]) + 1:]
    assert [e["event_type"] for e in after][:3] == ["Queued", "Preparing", "RoundScored"]
    second = production.children[1].pid  # the second worker took it on, and the timeline names it
    assert after[1]["sentence"] == (
        f"The run resumed from round {stopped_after} on {after[1]['actor_name']}: GPU, model and the checkpoint of "
        f"round {stopped_after}."
    )
    assert after[1]["actor_name"].startswith("Worker ") and after[1]["actor_name"].endswith(f"(process {second})")
    scored = [e.result["round_number"] for e in production.app_verity.repository.event_store.get(run_id)
              if type(e).__name__ == "RoundScored"]
    assert scored == [0, 1, 2, 3, 4]  # in the event store, every round once: none lost, none twice
    # nothing is lost: every round's rollouts are in the bucket, and no claim is left
    s3 = boto3.client("s3", endpoint_url=production.settings.s3_endpoint_url)
    keys = {item["Key"] for item in s3.list_objects_v2(Bucket="verity-runs", Prefix="org/runs/")["Contents"]}
    for number in range(1, 5):
        assert f"org/runs/{run_id}/rollouts/round-{number:03d}.jsonl" in keys
    assert production.eventually(lambda: production.handle.ctx.ledger.leases() == [])
