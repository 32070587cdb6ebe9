"""A trial through `python -m trainer run SPEC.json`, and a run whose storage is S3 (moto's server on 127.0.0.1)
that a second run continues from."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import boto3
import pytest

from domain.runs import messages
from trainer.loop import run
from trainer.progress import record_from_dict

pytestmark = pytest.mark.slow


def test_a_trial_from_the_command_line_reports_every_field(run_spec, tmp_path, tiny_model_dir):
    spec = run_spec(
        tmp_path / "storage", trial=True, rounds=20, prompts_per_round=64, price_per_hour=2.5,
        full_time_limit_hours=0.001, deadline=time.time() + 1200,
    )
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(spec.to_dict()))
    done = subprocess.run(
        [sys.executable, "-m", "trainer", "run", str(spec_file)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    records = [record_from_dict(json.loads(line)) for line in done.stdout.splitlines()]  # stdout: JSON lines only
    assert [r.type for r in records] == [
        "prepared", "round_scored", "round_scored", "adapter_saved", "trial_report", "completed"
    ]
    assert records[0].validation_prompts == 8
    assert records[2].graded_answers <= 8 * spec.answers_per_prompt  # one round on at most 8 prompts

    report = records[4]
    assert report.finished and report.formatting == {"prompts_checked": 8, "problems": []}
    assert report.seconds_per_round == pytest.approx(report.seconds.total, abs=0.01)
    assert min(report.seconds.sampling, report.seconds.update, report.seconds.validation) > 0
    assert report.peak_memory_bytes > 0 and report.preparation_seconds > 0
    assert report.full_training_rounds == 20
    # the estimate scales the round from 8 to 64 prompts, times 20 rounds, plus validation and preparation
    s = report.seconds
    expected = (s.sampling + s.grading + s.update) * 64 / 8 * 20 + s.validation * 64 / 8 * 21
    expected += report.preparation_seconds
    assert report.full_training_seconds == pytest.approx(expected, rel=0.01)
    assert report.full_gpu_cost == pytest.approx(report.full_training_seconds / 3600 * 2.5, abs=0.01)
    assert report.advice == [messages.TRIAL_ESTIMATE_HOLDS, messages.TRIAL_OVER_TIME_LIMIT]
    assert "Loading" not in done.stdout


def test_a_trial_that_reaches_its_limit_did_not_finish(run_spec, tmp_path, records):
    spec = run_spec(tmp_path, trial=True, deadline=time.time() + 100)
    assert not run(spec, emit=records)
    assert records.types[-2:] == ["failed", "trial_report"]  # before round 0 was done
    report = records[-1]
    assert not report.finished and report.full_training_seconds is None and report.full_gpu_cost is None
    assert report.advice == [messages.TRIAL_DID_NOT_FINISH]


@pytest.fixture
def s3_endpoint(monkeypatch):
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="verity")
    yield endpoint
    server.stop()


def test_a_run_writes_to_s3_and_the_next_run_continues_its_adapter(run_spec, s3_endpoint):
    storage = {"location": "s3://verity/team-a", "endpoint_url": s3_endpoint}
    small = {"rounds": 1, "prompts_per_round": 8, "answers_per_prompt": 8, "validation_sample_size": 8}
    first = []
    assert run(run_spec(storage, run_id="first", **small), emit=first.append)
    saved = next(r for r in first if r.type == "adapter_saved")
    assert saved.location == "s3://verity/team-a/runs/first/adapter"

    keys = {o["Key"] for o in boto3.client("s3", endpoint_url=s3_endpoint).list_objects_v2(Bucket="verity")["Contents"]}
    assert {"team-a/runs/first/rollouts/round-001.jsonl", "team-a/runs/first/adapter/adapter_model.safetensors",
            "team-a/runs/first/adapter/adapter_config.json"} <= keys

    start = {"path": saved.location, "sha256": saved.sha256, "size_bytes": saved.size_bytes}
    second = []
    assert run(run_spec(storage, run_id="second", start_adapter=start, **small),
               emit=second.append)
    best = next(r for r in first if r.type == "completed").best_validation_reward
    assert second[1].round == 0 and second[1].validation_reward == best  # it starts where the first run ended
    assert next(r for r in second if r.type == "adapter_saved").location.endswith("runs/second/adapter")

    tampered = []
    assert not run(run_spec(storage, run_id="third",
                            start_adapter={**start, "sha256": "0" * 64}, **small), emit=tampered.append)
    assert tampered[-1].message == (
        "The adapter to start from does not match the checksum and size saved with its run."
    )
