"""The embedded default restarted: its queue lived in the console's memory, and the jobs follow the event log, so
what was recorded before the restart is done after it. An evaluation created while the one worker was busy (its
message waiting in memory behind a training run) is evaluated once the console is back."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import TYPE_CHECKING
from uuid import UUID

import pytest

from jobs.service import start

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow

HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
SCORING = {"preset": "verifiable", "format_bonus": True}


def test_an_evaluation_created_before_a_restart_of_the_embedded_console_is_evaluated_after_it(
    embedded: Site, trainer_children: list[subprocess.Popen]
) -> None:
    verity = embedded.app_verity
    run_id = embedded.save(rounds=30)
    embedded.launch(run_id)
    embedded.wait_training(run_id, round_number=1)
    os.kill(trainer_children[-1].pid, signal.SIGSTOP)  # the one worker is busy for as long as the test likes

    org_id = embedded.read_models.organizations()[0].id
    project_id = embedded.read_models.projects(org_id)[0].id
    created = embedded.client.post("/api/evaluations", json={
        "project_id": str(project_id), "name": "asked before the restart", "source": HELD_OUT, "scoring": SCORING,
        "main_metric": "math_pairs", "max_answer_tokens": 16,
    })
    assert created.status_code == 201, created.text
    evaluation_id = UUID(created.json()["id"])
    assert embedded.handle.wait_sent(verity.recorder.max_notification_id() or 0, timeout=10)  # on the queue ...
    time.sleep(1.0)
    assert verity.get_evaluation(None, evaluation_id).state == "queued"  # ... in memory, behind the run

    embedded.handle.stop()  # the console stops: its in-memory queue, and the evaluation's message, are gone
    restarted = start(embedded.settings, verity, embedded.read_models, config=embedded.handle.ctx.config)
    try:
        deadline = time.monotonic() + 120
        while verity.get_evaluation(None, evaluation_id).state in ("queued", "running"):
            assert time.monotonic() < deadline, "the evaluation was never taken up after the restart"
            time.sleep(0.5)
    finally:
        restarted.stop()

    evaluation = verity.get_evaluation(None, evaluation_id)
    assert evaluation.status == "Completed", evaluation.failure
    assert len(evaluation.results) == 8
    assert embedded.run(run_id)["state"] == "failed"  # the run the stopped worker was training ends in words
