"""The Time limit counts from launch. A deadline that passes in the middle of a round stops the run and keeps its
best adapter; a trainer that hangs past the limit is stopped by the watchdog. A limit of 0.1 hours is made to last
a few seconds here by the jobs' time scale (the trainer stops training 3 minutes before the limit, as always)."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from jobs.config import JobsConfig

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow


@pytest.fixture
def jobs_config(jobs_config: JobsConfig, request: pytest.FixtureRequest) -> JobsConfig:
    """conftest's fast timings, where a Time limit of 0.1 hours (360 s) lasts the test's parameter in seconds,
    with a watchdog grace of 3 s and the product's requeue time."""
    return replace(
        jobs_config,
        watchdog_grace_seconds=3.0,
        requeue_after_seconds=JobsConfig().requeue_after_seconds,
        time_limit_scale=request.param / 360,
    )


@pytest.mark.parametrize("jobs_config", [180 + 15], indirect=True)  # training must stop 15 s after launch
def test_a_deadline_that_passes_mid_round_stops_the_run_and_keeps_its_best_adapter(embedded: Site) -> None:
    run_id = embedded.save(rounds=500, time_limit_hours=0.1)
    embedded.launch(run_id)

    run = embedded.wait_ended(run_id, timeout=90)

    assert run["state"] == "adapter_ready", run.get("failure")
    assert run["stop_reason"] == "time_limit"
    done = run["rounds_done"]
    assert 0 < done < 500
    assert run["ended"] == f"Stopped after round {done} of 500: time limit · best round {run['best_round']}"
    assert run["adapter"]["best_round"] == run["best_round"]
    assert [e["event_type"] for e in embedded.timeline(run_id)][-2:] == ["Stopped", "AdapterReady"]


@pytest.mark.parametrize("jobs_config", [8], indirect=True)
def test_a_trainer_that_hangs_is_stopped_by_the_watchdog_after_the_time_limit(
    embedded: Site, trainer_children: list[subprocess.Popen]
) -> None:
    run_id = embedded.save(rounds=5, time_limit_hours=0.1)
    embedded.launch(run_id)
    assert embedded.eventually(lambda: bool(trainer_children), timeout=20)
    trainer = trainer_children[-1]
    os.kill(trainer.pid, signal.SIGSTOP)  # hung: it will never report or exit by itself

    run = embedded.wait_ended(run_id, timeout=40)

    assert run["state"] == "failed"
    assert run["failure"].startswith("The trainer was still running 3 seconds after the time limit")
    assert trainer.poll() is not None
