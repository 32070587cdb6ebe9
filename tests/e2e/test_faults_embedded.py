"""What goes wrong on one machine, and how each run ends: a cancel in the middle of a round, a trainer killed by the
host, a custom metric that fails on most of the starting adapter's answers, and a trainer that hangs past its time
limit."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from domain.actors import Actor
from domain.rewards.math_pairs import math_pairs_problem

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow

FRAGILE_METRIC = '''
def score(answer, reference):
    if answer.strip() == reference.strip():
        return 1.0
    raise ValueError("only handles right answers")
'''


# Handles the validation sample (its references are marked), and raises on most wrong training answers.
FRAGILE_ON_TRAINING = """
def score(answer, reference):
    if reference.startswith("held out: "):
        return float(answer.strip() == reference.removeprefix("held out: ").strip())
    if answer.strip() == reference.strip():
        return 1.0
    raise ValueError("only handles right answers")
"""


def _math_pairs_rows(count: int, seed: int, marked: bool) -> bytes:
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        question, answer = math_pairs_problem(rng)
        reference = f"held out: {answer}" if marked else answer
        rows.append({"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": reference}]})
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def the_trainer(children: list[subprocess.Popen], site: Site) -> subprocess.Popen:
    assert site.eventually(lambda: bool(children), timeout=30), "no trainer process was started"
    return children[-1]


def test_cancel_in_the_middle_of_a_round_stops_the_trainer_and_retry_starts_again_from_round_1(
    embedded: Site, trainer_children: list[subprocess.Popen]
) -> None:
    run_id = embedded.training_run(rounds=30)

    cancelled = embedded.client.post(f"/api/runs/{run_id}/cancel")

    assert cancelled.status_code == 200 and cancelled.json()["run"]["state"] == "cancelled"
    trainer = the_trainer(trainer_children, embedded)
    assert embedded.eventually(lambda: trainer.poll() is not None, timeout=8), "the trainer kept running"
    last = embedded.timeline(run_id)[-1]
    assert last["event_type"] == "Cancelled" and "end-to-end tests" in last["actor_name"]  # who cancelled
    assert embedded.run(run_id)["state"] == "cancelled"  # no progress record overwrote the cancel

    retried = embedded.client.post(f"/api/runs/{run_id}/retry")
    assert retried.status_code == 201, retried.text
    retry_id = UUID(retried.json()["run"]["id"])
    retry = embedded.wait(retry_id, lambda run: run["rounds_done"] >= 1 or run["state"] == "failed")
    assert retry["settings"]["training"] == embedded.run(run_id)["settings"]["training"]
    assert retry["retry_of"] == str(run_id) and retry["best_round"] is not None  # it scored its own round 0
    embedded.client.post(f"/api/runs/{retry_id}/cancel")
    assert embedded.wait_ended(retry_id)["state"] == "cancelled"


def test_a_trainer_killed_by_the_host_ends_its_run_with_a_failure_that_says_so(
    embedded: Site, trainer_children: list[subprocess.Popen]
) -> None:
    run_id = embedded.training_run(rounds=30)

    os.kill(the_trainer(trainer_children, embedded).pid, signal.SIGKILL)  # as the kernel's OOM killer would

    run = embedded.wait_ended(run_id)
    assert run["state"] == "failed"  # so it has Retry
    assert "killed (SIGKILL), which is how a host ends a process that runs out of memory" in run["failure"]
    assert embedded.timeline(run_id)[-1]["actor_name"].startswith("Worker ")


def test_a_custom_metric_failing_on_most_of_the_starting_adapters_answers_fails_the_run_in_round_0(
    embedded: Site,
) -> None:
    # It scores a reference against itself, and raises on the tiny model's validation answers that are not right:
    # most of them. A round whose metric fails too often stops a run that has an adapter to keep (see
    # tests/trainer/test_endings.py); before round 0 is scored there is none, so the run fails.
    org_id = embedded.read_models.organizations()[0].id
    version = embedded.app_verity.register_custom_metric(
        org_id, "fragile", FRAGILE_METRIC, Actor("person", "owner@localhost", "owner@localhost")
    )
    reward = {"preset": "qa", "metric": f"custom.{version.id}", "custom_metric": str(version.id)}
    run_id = embedded.save(rounds=3, reward=reward)
    embedded.launch(run_id)

    run = embedded.wait_ended(run_id)

    assert run["state"] == "failed", run  # so it has Retry
    assert re.fullmatch(
        r"Custom metric fragile \(v1\) failed on \d+ of \d+ answers in round 0: execution\. Make it handle any text\.",
        run["failure"],
    ), run["failure"]
    events = [e["event_type"] for e in embedded.timeline(run_id)]
    assert "RoundScored" not in events and "AdapterReady" not in events and events[-1] == "Failed"


def test_a_custom_metric_failing_on_most_answers_of_round_1_stops_the_run_and_keeps_the_starting_adapter(
    embedded: Site,
) -> None:
    version_id = embedded.upload("marked", _math_pairs_rows(64, 1, False), _math_pairs_rows(16, 2, True))
    org_id = embedded.read_models.organizations()[0].id
    metric = embedded.app_verity.register_custom_metric(
        org_id, "fragile", FRAGILE_ON_TRAINING, Actor("person", "owner@localhost", "owner@localhost")
    )
    reward = {"preset": "qa", "metric": f"custom.{metric.id}", "custom_metric": str(metric.id)}
    run_id = embedded.save(rounds=3, reward=reward, dataset_version=version_id)
    embedded.launch(run_id)

    run = embedded.wait_ended(run_id)

    assert run["state"] == "adapter_ready", run.get("failure")
    assert run["stop_reason"] == "metric_failures"
    assert re.fullmatch(
        r"Custom metric fragile \(v1\) failed on \d+ of \d+ answers in round 1: execution\. Make it handle any text\.",
        run["note"],
    ), run["note"]
    assert run["adapter"]["best_round"] == 0 and run["ended"].startswith("Stopped after round 0 of 3")
    events = [e["event_type"] for e in embedded.timeline(run_id)]
    assert events[-3:] == ["RoundScored", "Stopped", "AdapterReady"]
