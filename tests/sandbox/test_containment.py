"""A hostile metric is contained: it sees no secret, reaches no network, starts no process, and whatever it
does to its own batch leaves the other batches and the trainer's process unharmed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.rewards.types import AnswerScore

SECRET = "FAKE-SECRET-wJalrXUtnFEMI-K7MDENG"
WELL_BEHAVED = ["42"] * 8
FINE = [AnswerScore(value=1.0)] * 8


@pytest.fixture
def secret_in_environment(monkeypatch: pytest.MonkeyPatch) -> str:
    """The trainer's own environment holds storage keys when the metric is started."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("VERITY_STORAGE_URL", f"s3://bucket?key={SECRET}")
    return SECRET


@pytest.fixture
def server_process() -> Iterator[int]:
    """A process like the console server, with the secret in its environment and arguments; yields its pid."""
    environment = {"PATH": os.environ["PATH"], "AWS_SECRET_ACCESS_KEY": SECRET}
    command = [sys.executable, "-c", "import time; time.sleep(60)", f"--token={SECRET}"]
    server = subprocess.Popen(command, env=environment)
    yield server.pid
    server.kill()
    server.wait()


@pytest.fixture
def root_only_file() -> Iterator[Path]:
    """A secret file in a folder anyone may enter, readable by root alone (mode 0600)."""
    folder = Path(tempfile.mkdtemp(prefix="verity-secret-"))
    folder.chmod(0o755)
    path = folder / "credentials"
    path.write_text(f"aws_secret_access_key = {SECRET}\n")
    path.chmod(0o600)
    yield path
    path.unlink()
    folder.rmdir()


@pytest.fixture
def listening_server() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.3)
    yield server
    server.close()


def _connection_arrives(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except TimeoutError:
        return False
    connection.close()
    return True


def test_the_metric_sees_none_of_the_servers_environment(
    secret_in_environment, server_process, start_hostile_metric, run_here
) -> None:
    probes = ["own_environment", "every_process", f"file:/proc/{server_process}/environ"]
    # Run in the trainer's process, each probe finds the secret ...
    assert [run_here(probe, SECRET) for probe in probes] == [1.0, 1.0, 1.0]
    # ... run in the sandbox started after the secret was set, none does.
    metric = start_hostile_metric()
    scores = metric.score_batch([*probes, "file:/proc/1/environ"], [SECRET, SECRET, SECRET, "="])
    assert scores == [AnswerScore(value=0.0)] * 4


@pytest.mark.skipif(os.geteuid() != 0, reason="the drop to an unprivileged user happens when the trainer is root")
def test_the_metric_cannot_read_files_only_root_may_read(root_only_file, hostile_metric, run_here) -> None:
    assert run_here(f"file:{root_only_file}", SECRET) == 1.0
    scores = hostile_metric.score_batch([f"file:{root_only_file}", "unprivileged"], [SECRET, ""])
    assert scores == [AnswerScore(value=0.0), AnswerScore(value=1.0)]


def test_each_batch_works_in_a_private_folder_of_its_own(hostile_metric) -> None:
    assert hostile_metric.score_batch(["private_folder"], [""]) == [AnswerScore(value=1.0)]
    # The next batch starts in a new folder: the note of the one before is gone.
    assert hostile_metric.score_batch(["file:note.txt"], ["mine"]) == [AnswerScore(value=0.0)]


def test_what_the_metric_writes_outside_its_folder_does_not_reach_the_host(hostile_metric) -> None:
    host_files = [Path(folder) / f"verity-escape-{uuid.uuid4().hex}" for folder in ("/tmp", "/dev/shm")]
    scores = hostile_metric.score_batch([f"write:{path}" for path in host_files], ["", ""])
    assert scores == [AnswerScore(value=1.0)] * 2  # it wrote, into private folders that vanish with the worker
    assert not any(path.exists() for path in host_files)


def test_no_connection_arrives_from_the_metric(listening_server, hostile_metric, run_here) -> None:
    port = listening_server.getsockname()[1]
    # Straight through libc, around Python's audit hooks, a connection from the trainer's process arrives.
    assert run_here(f"raw_socket:{port}", "") == 1.0
    assert _connection_arrives(listening_server)

    graded = hostile_metric.grade([f"socket:{port}", f"raw_socket:{port}", "42"], ["42"] * 3)
    assert [g.score for g in graded] == [AnswerScore.failed("execution"), AnswerScore(0.0), AnswerScore(1.0)]
    assert graded[0].detail.startswith("PermissionError at line ")
    assert graded[0].detail.endswith(": the metric sandbox does not allow socket.__new__")
    assert not _connection_arrives(listening_server)


def test_the_metric_can_start_no_process(hostile_metric) -> None:
    graded = hostile_metric.grade(["fork_bomb", "raw_fork", "42"], ["42"] * 3)
    assert [g.score for g in graded] == [
        AnswerScore.failed("execution"),
        AnswerScore(value=0.0),
        AnswerScore(1.0),
    ]
    assert "os.fork" in graded[0].detail


def test_a_batch_that_runs_out_of_time_fails_alone(hostile_metric) -> None:
    started = time.monotonic()
    scores = hostile_metric.score_batch(["loop"] + ["42"] * 7 + ["sleep"] + ["42"] * 7 + WELL_BEHAVED, ["42"] * 24)
    assert scores[:16] == [AnswerScore.failed("timeout")] * 16
    assert scores[16:] == FINE
    assert time.monotonic() - started < 8  # two batches of 2 s side by side, then one quick one


def test_a_batch_that_runs_out_of_memory_fails_alone(hostile_metric) -> None:
    scores = hostile_metric.score_batch(["42", "allocate"] + ["42"] * 6 + WELL_BEHAVED, ["42"] * 16)
    assert scores == [AnswerScore.failed("memory")] * 8 + FINE


def test_a_batch_that_prints_too_much_fails_alone(hostile_metric) -> None:
    scores = hostile_metric.score_batch(WELL_BEHAVED + ["print"] + ["42"] * 7, ["42"] * 16)
    assert scores == FINE + [AnswerScore.failed("output")] * 8


def test_after_every_attack_the_same_sandbox_still_scores(hostile_metric) -> None:
    attacks = ["loop", "allocate", "print", "fork_bomb", "hard_exit", "raise", "nan", "42"]
    scores = hostile_metric.score_batch([*attacks, *WELL_BEHAVED], ["42"] * 16)
    assert scores[:8] == [AnswerScore.failed("timeout")] * 8
    assert scores[8:] == FINE
    assert hostile_metric.score_batch(["42", "41"], ["42", "42"]) == [AnswerScore(1.0), AnswerScore(0.0)]
