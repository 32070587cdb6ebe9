"""Every child process of the jobs (a run's trainer, an evaluation, a merge), watched by the worker thread that
started it, with one supervisor.

A Dramatiq time limit can't interrupt a GPU call, so the child runs `python -m trainer COMMAND SPEC.json` in its
own process group: the supervisor reads its progress lines from stdout (each goes to the job's `Records`, which
turns it into a domain command), forwards stderr to the worker's log (with the run the worker bound, and the child's
own level and fields where it logs JSON: verity/log_format.py), beats the job's heartbeat, asks every second
or so whether the job was cancelled, and kills the whole group on a cancel or when the watchdog's time comes (the
job's time limit plus a grace), whatever the child is doing.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import json
import logging
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from jobs.config import JobsConfig
from verity.log_format import child_record, context_for_child

log = logging.getLogger(__name__)
trainer_log = logging.getLogger("jobs.trainer")

PR_SET_PDEATHSIG = 1
NextLine = Literal["recorded", "quiet", "ended"]  # what waiting for the child's next progress line came to


@dataclass(frozen=True)
class Outcome:
    """How the supervision ended: `reason` is one of finished, cancelled, watchdog, died, lost."""

    reason: str
    returncode: int | None
    finished: bool  # the child reported its ending (completed or failed)


@dataclass(frozen=True)
class Timing:
    heartbeat_seconds: float
    cancel_poll_seconds: float
    terminate_grace_seconds: float


def timing_of(config: JobsConfig) -> Timing:
    return Timing(config.heartbeat_seconds, config.cancel_poll_seconds, config.terminate_grace_seconds)


@dataclass(frozen=True)
class Child:
    """What to run: `python -m trainer <command> SPEC.json`, with `spec` written to that file, named `label` in
    the worker's log ("run 1f2e3d4c")."""

    command: str
    spec: dict[str, Any]
    label: str


class Records(Protocol):
    """Where a child's progress lines go, one JSON object each; `finished` once one said how the job ended."""

    finished: bool

    def record_line(self, data: dict[str, Any]) -> None: ...


def _die_with_parent() -> None:
    """In the child before exec: a worker that dies (even by SIGKILL) takes its child with it, as a GPU machine
    that stops would, so no orphan keeps training a run the reconciler has already ended."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the group kill on cancel still applies
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def trainer_command(command: str, spec_path: Path) -> list[str]:
    return [sys.executable, "-m", "trainer", command, str(spec_path)]


def _never() -> bool:
    return False


class Supervisor:
    def __init__(
        self,
        child: Child,
        records: Records,
        timing: Timing,
        kill_at: float,
        *,
        cancelled: Callable[[], bool] = _never,
        beat: Callable[[], bool] | None = None,
        on_child: Callable[[subprocess.Popen], None] | None = None,
        environment: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> None:
        """`kill_at`: the watchdog's time (epoch seconds). `cancelled` reads the job's state; `beat` renews its
        claim and says False once the claim is gone (the reconciler ended the job without us). `environment`
        turns the worker's environment into the child's (the storage's credentials go there, never into the spec
        file)."""
        self.child_spec = child
        self.records = records
        self.timing = timing
        self.kill_at = kill_at
        self.cancelled = cancelled
        self.beat = beat
        self.on_child = on_child
        self.environment = environment or dict
        self.child: subprocess.Popen | None = None

    @property
    def label(self) -> str:
        return self.child_spec.label

    def run(self) -> Outcome:
        with tempfile.TemporaryDirectory(prefix=f"verity-{self.child_spec.command}-") as folder:
            spec_path = Path(folder) / "spec.json"
            spec_path.write_text(json.dumps(self.child_spec.spec))
            self.child = subprocess.Popen(
                trainer_command(self.child_spec.command, spec_path),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                start_new_session=True,  # its own process group: a kill reaches the sandbox and loaders too
                preexec_fn=_die_with_parent,
                env={**self.environment(dict(os.environ)), **context_for_child(), "PYTHONUNBUFFERED": "1"},
            )
            command = self.child_spec.command
            log.info("%s: `python -m trainer %s` started as pid %s", self.label, command, self.child.pid)
            if self.on_child:
                self.on_child(self.child)
            try:
                return self._watch(self.child)
            finally:
                self._kill(self.child)

    def _watch(self, child: subprocess.Popen) -> Outcome:
        lines: queue.Queue[str | None] = queue.Queue()
        readers = [
            threading.Thread(target=_read_lines, args=(child.stdout, lines.put), daemon=True),
            # in this thread's context, so that what it relays carries the run bound here (a thread starts bare)
            threading.Thread(target=contextvars.copy_context().run, args=(_forward_stderr, child.stderr, self.label),
                             daemon=True),
        ]
        for reader in readers:
            reader.start()
        next_beat = next_poll = time.monotonic()
        stdout_open = True
        while True:
            now = time.monotonic()
            if self.beat is not None and now >= next_beat:
                next_beat = now + self.timing.heartbeat_seconds
                if self._lost():  # the reconciler took the job away: it was ended without us
                    log.warning("%s: the heartbeat row is gone; stopping the child", self.label)
                    self._kill(child)
                    return Outcome("lost", child.poll(), self.records.finished)
            if now >= next_poll:
                next_poll = now + self.timing.cancel_poll_seconds
                if self._cancelled():
                    log.info("%s was cancelled: stopping the child", self.label)
                    self._kill(child)
                    return Outcome("cancelled", child.poll(), self.records.finished)
            if time.time() >= self.kill_at:
                log.warning("%s: past its time limit and grace; the watchdog stops the child", self.label)
                self._kill(child)
                self._drain(lines)
                return Outcome("watchdog", child.poll(), self.records.finished)
            if stdout_open:
                stdout_open = self._record_next_line(lines, timeout=0.2) != "ended"
            else:
                try:
                    returncode = child.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    continue
                reason = "finished" if self.records.finished else "died"
                return Outcome(reason, returncode, self.records.finished)

    def _lost(self) -> bool:
        """Whether the claim is gone. A database that can't be reached now loses nothing: the work goes on."""
        assert self.beat is not None
        try:
            return not self.beat()
        except Exception:
            log.exception("%s: could not beat the heartbeat", self.label)
            return False

    def _cancelled(self) -> bool:
        try:
            return self.cancelled()
        except Exception:
            log.exception("%s: could not read the job to see a cancel", self.label)
            return False

    def _drain(self, lines: queue.Queue[str | None]) -> None:
        """Records lines the child wrote before it was killed (e.g. an adapter saved just in time)."""
        while self._record_next_line(lines, timeout=0.5) == "recorded":
            pass

    def _record_next_line(self, lines: queue.Queue[str | None], timeout: float) -> NextLine:
        """Records the child's next line if one comes within `timeout`: "quiet" when none came, "ended" once its
        output has closed (the reader's None)."""
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            return "quiet"
        if line is None:
            return "ended"
        self._record_line(line)
        return "recorded"

    def _record_line(self, line: str) -> None:
        """One progress line to the job's records; a database hiccup is the records' to retry (jobs/retrying.py),
        and what they give up on stops the child (the caller says how the job ended)."""
        text = line.strip()
        if not text:
            return
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or "type" not in data:
            trainer_log.warning("%s: not a progress record: %s", self.label, text[:300])
            return
        self.records.record_line(data)

    def _kill(self, child: subprocess.Popen) -> None:
        """SIGTERM to the whole group, then SIGKILL after the grace."""
        if child.poll() is not None:
            return
        _signal_group(child, signal.SIGTERM)
        try:
            child.wait(timeout=self.timing.terminate_grace_seconds)
        except subprocess.TimeoutExpired:
            _signal_group(child, signal.SIGKILL)
            child.wait()


def _signal_group(child: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signum)


def _read_lines(stream: IO[str] | None, put: Callable[[str | None], None]) -> None:
    if stream is not None:
        for line in stream:
            put(line)
    put(None)


def _forward_stderr(stream: IO[str] | None, label: str) -> None:
    if stream is None:
        return
    for line in stream:
        _relay(line.rstrip(), label)


def _relay(line: str, label: str) -> None:
    """One line of the child's stderr into the worker's log: a record it logged as JSON keeps its level and fields;
    any other line (its text logs, a library's print, a line of a traceback) is one info record of words."""
    record = child_record(line)
    if record is None:
        trainer_log.info("[%s] %s", label, line)
    else:
        trainer_log.log(record.level, "[%s] %s", label, record.message, extra=record.fields)


def describe_exit(returncode: int | None) -> str:
    """Why a child process ended, in words: a signal's name, or its exit code."""
    if returncode is None:
        return "it stopped answering"
    if returncode < 0:
        name = signal.Signals(-returncode).name
        if -returncode == signal.SIGKILL:
            return f"it was killed ({name}), which is how a host ends a process that runs out of memory"
        return f"it was stopped by {name}"
    return f"it exited with code {returncode}"
