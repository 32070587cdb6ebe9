"""VERITY_LOG_FORMAT=json in the worker: what the trainer it supervises logs comes out of the worker as JSON lines that
name the run (org_id and run_id), at the trainer's own level where the trainer logs JSON too.

The trainer here is the real `python -m trainer`, given a merge spec it refuses at once: it logs one error and exits,
with no model loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any
from uuid import uuid4

import pytest
from log_lines import applied, json_lines

from jobs.supervisor import Child, Outcome, Supervisor, Timing
from verity.log_format import CHILD_CONTEXT, bind_run, logging_config

ORG_ID, RUN_ID = uuid4(), uuid4()
LABEL = "merge 1f2e3d4c"


class KeptLines:
    finished = False

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def record_line(self, data: dict[str, Any]) -> None:
        self.lines.append(data)


def supervise_a_failing_trainer(environment: Callable[[dict[str, str]], dict[str, str]] | None = None) -> Outcome:
    timing = Timing(heartbeat_seconds=60, cancel_poll_seconds=60, terminate_grace_seconds=5)
    supervisor = Supervisor(Child("merge", {}, LABEL), KeptLines(), timing, kill_at=time.time() + 60,
                            environment=environment)
    with bind_run(ORG_ID, RUN_ID):  # as jobs/launching.py binds the run it trains
        return supervisor.run()


def test_the_trainer_s_error_reaches_the_worker_s_log_as_one_json_line_naming_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VERITY_LOG_FORMAT", "json")
    with applied(logging_config(json=True)) as buffers:
        outcome = supervise_a_failing_trainer()

    assert (outcome.reason, outcome.returncode) == ("died", 1)
    [error] = [line for line in json_lines(buffers["default"]) if line["logger"] == "jobs.trainer"]
    assert error["level"] == "ERROR"
    assert error["message"].startswith(f"[{LABEL}] trainer: the trainer stopped on an error\nTraceback")
    assert error["message"].endswith("KeyError: 'storage'")  # the traceback is in the one record
    assert (error["org_id"], error["run_id"]) == (str(ORG_ID), str(RUN_ID))


def test_a_trainer_that_writes_text_is_relayed_line_by_line_naming_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. a library's print or a crash before its logging is set up: each line one JSON record, with the run
    monkeypatch.setenv("VERITY_LOG_FORMAT", "json")
    with applied(logging_config(json=True)) as buffers:
        supervise_a_failing_trainer(lambda env: {k: v for k, v in env.items() if k != "VERITY_LOG_FORMAT"})

    relayed = [line for line in json_lines(buffers["default"]) if line["logger"] == "jobs.trainer"]
    assert relayed[0]["message"].endswith(" ERROR trainer the trainer stopped on an error")
    assert relayed[-1]["message"] == f"[{LABEL}] KeyError: 'storage'"
    assert all((line["org_id"], line["run_id"], line["level"]) == (str(ORG_ID), str(RUN_ID), "INFO")
               for line in relayed)


def test_the_trainer_logs_json_with_the_run_its_parent_handed_it(tmp_path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text("{}")
    handed = json.dumps({"org_id": str(ORG_ID), "run_id": str(RUN_ID)})
    environment = {**os.environ, "VERITY_LOG_FORMAT": "json", CHILD_CONTEXT: handed}

    ended = subprocess.run([sys.executable, "-m", "trainer", "merge", str(spec)], env=environment,
                           capture_output=True, text=True, timeout=60)

    assert ended.returncode == 1 and ended.stdout == ""
    [record] = [json.loads(line) for line in ended.stderr.splitlines()]  # one JSON object a line
    assert (record["level"], record["logger"], record["message"]) == ("ERROR", "trainer",
                                                                      "the trainer stopped on an error")
    assert (record["org_id"], record["run_id"]) == (str(ORG_ID), str(RUN_ID))
