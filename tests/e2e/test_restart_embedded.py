"""The embedded default restarted: its queue lived in the console's memory, and the jobs follow the event log, so
what was recorded before the restart is done after it. An evaluation created while the one worker was busy (its
message waiting in memory behind a training run) is evaluated once the console is back; the run the stopping worker
was training goes back on its queue and the restarted console's worker goes on from its last round's checkpoint, to
Completed, every round once."""

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

ROUNDS = 6
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
SCORING = {"preset": "verifiable", "format_bonus": True}


def test_an_evaluation_created_before_a_restart_of_the_embedded_console_is_evaluated_after_it(
    embedded: Site, trainer_children: list[subprocess.Popen]
) -> None:
    verity = embedded.app_verity
    run_id = embedded.save(rounds=ROUNDS)
    embedded.launch(run_id)
    embedded.wait_training(run_id, round_number=3)  # rounds 1 and 2 left checkpoints
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
    stopped_after = verity.get_run(None, run_id).last_round
    assert verity.get_run(None, run_id).state == "queued"  # back on its queue, not ended
    restarted = start(embedded.settings, verity, embedded.read_models, config=embedded.handle.ctx.config)
    try:
        deadline = time.monotonic() + 120
        while verity.get_evaluation(None, evaluation_id).state in ("queued", "running"):
            assert time.monotonic() < deadline, "the evaluation was never taken up after the restart"
            time.sleep(0.5)
        run = embedded.wait_ended(run_id)
    finally:
        restarted.stop()

    evaluation = verity.get_evaluation(None, evaluation_id)
    assert evaluation.status == "Completed", evaluation.failure
    assert len(evaluation.results) == 8
    assert run["state"] == "completed", run.get("failure")  # the run the stopped worker was training went on
    scored = [e.result["round_number"] for e in verity.repository.event_store.get(run_id)
              if type(e).__name__ == "RoundScored"]
    assert scored == list(range(ROUNDS + 1))  # every round once: none lost, none twice
    sentences = [entry["sentence"] for entry in embedded.timeline(run_id)]
    process = f"process {os.getpid()}"  # the embedded worker is the console's own process
    assert sum(s.endswith(f"{process}) stopped after round {stopped_after}; the run went back on its queue to "
                          f"resume from round {stopped_after}.") for s in sentences) == 1, sentences
    assert sum(s.startswith(f"The run resumed from round {stopped_after} on Worker ") for s in sentences) == 1
