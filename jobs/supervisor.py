"""The trainer as a child process, watched by the worker thread that started it.

A Dramatiq time limit can't interrupt a GPU call, so the trainer runs in its own process group: the supervisor
reads its progress lines from stdout (each becomes a domain command), forwards stderr to the worker's log, beats
the run's heartbeat, reads the run every second to see a cancel, and kills the whole group on a cancel or when the
watchdog's time comes (the Time limit plus a grace), whatever the trainer is doing.
"""

from __future__ import annotations

import contextlib
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
from typing import IO
from uuid import UUID

from domain.application import Verity
from domain.errors import DomainError
from domain.runs.run import CANCELLED
from jobs.recording import ProgressRecorder
from trainer.progress import record_from_dict
from trainer.spec import RunSpec

log = logging.getLogger(__name__)
trainer_log = logging.getLogger("jobs.trainer")

PR_SET_PDEATHSIG = 1
RECORD_ATTEMPTS = 8  # about a minute of retries


@dataclass(frozen=True)
class Outcome:
    """How the supervision ended: `reason` is one of finished, cancelled, watchdog, died, lost."""

    reason: str
    returncode: int | None
    finished: bool  # the trainer reported its ending (completed or failed)


@dataclass(frozen=True)
class Timing:
    heartbeat_seconds: float
    cancel_poll_seconds: float
    terminate_grace_seconds: float


def _die_with_parent() -> None:
    """In the child before exec: a worker that dies (even by SIGKILL) takes its trainer with it, as a GPU
    machine that stops would, so no orphan keeps training a run the reconciler has already ended."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the group kill on cancel still applies
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def trainer_command(spec_path: Path) -> list[str]:
    return [sys.executable, "-m", "trainer", "run", str(spec_path)]


class Supervisor:
    def __init__(
        self,
        verity: Verity,
        spec: RunSpec,
        recorder: ProgressRecorder,
        timing: Timing,
        kill_at: float,
        beat: Callable[[], bool],
        on_child: Callable[[subprocess.Popen], None] | None = None,
        environment: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> None:
        """`environment` turns the worker's environment into the trainer's (the storage's credentials go there,
        never into the spec file)."""
        self.verity = verity
        self.spec = spec
        self.run_id = UUID(spec.run_id)
        self.recorder = recorder
        self.timing = timing
        self.kill_at = kill_at
        self.beat = beat
        self.on_child = on_child
        self.environment = environment or dict
        self.child: subprocess.Popen | None = None

    def run(self) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="verity-run-") as folder:
            spec_path = Path(folder) / "spec.json"
            spec_path.write_text(json.dumps(self.spec.to_dict()))
            self.child = subprocess.Popen(
                trainer_command(spec_path),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                start_new_session=True,  # its own process group: a kill reaches the sandbox and loaders too
                preexec_fn=_die_with_parent,
                env={**self.environment(dict(os.environ)), "PYTHONUNBUFFERED": "1"},
            )
            log.info("run %s: trainer started as pid %s", self.run_id, self.child.pid)
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
            threading.Thread(target=_forward_stderr, args=(child.stderr, self.spec.run_id), daemon=True),
        ]
        for reader in readers:
            reader.start()
        next_beat = next_poll = time.monotonic()
        stdout_open = True
        while True:
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + self.timing.heartbeat_seconds
                if self._lost():  # the reconciler took the run away: it was ended without us
                    log.warning("run %s: the heartbeat row is gone; stopping the trainer", self.run_id)
                    self._kill(child)
                    return Outcome("lost", child.poll(), self.recorder.finished)
            if now >= next_poll:
                next_poll = now + self.timing.cancel_poll_seconds
                if self._cancelled():
                    log.info("run %s was cancelled: stopping the trainer", self.run_id)
                    self._kill(child)
                    return Outcome("cancelled", child.poll(), self.recorder.finished)
            if time.time() >= self.kill_at:
                log.warning("run %s: past its time limit and grace; the watchdog stops the trainer", self.run_id)
                self._kill(child)
                self._drain(lines)
                return Outcome("watchdog", child.poll(), self.recorder.finished)
            if stdout_open:
                try:
                    line = lines.get(timeout=0.2)
                except queue.Empty:
                    continue
                if line is None:
                    stdout_open = False
                    continue
                self._record_line(line)
            else:
                try:
                    returncode = child.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    continue
                reason = "finished" if self.recorder.finished else "died"
                return Outcome(reason, returncode, self.recorder.finished)

    def _lost(self) -> bool:
        """Whether the claim is gone. A database that can't be reached now loses nothing: training goes on."""
        try:
            return not self.beat()
        except Exception:
            log.exception("run %s: could not beat the heartbeat", self.run_id)
            return False

    def _cancelled(self) -> bool:
        try:
            return self.verity.get_run(None, self.run_id).state == CANCELLED
        except Exception:
            log.exception("run %s: could not read the run to see a cancel", self.run_id)
            return False

    def _drain(self, lines: queue.Queue[str | None]) -> None:
        """Records lines the trainer wrote before it was killed (e.g. an adapter saved just in time)."""
        while True:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                return
            if line is None:
                return
            self._record_line(line)

    def _record_line(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        try:
            record = record_from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError):
            trainer_log.warning("run %s: not a progress record: %s", self.spec.run_id, text[:300])
            return
        # A database hiccup must not lose a record: try again for a while before giving up on the run.
        for attempt in range(RECORD_ATTEMPTS):
            try:
                self.recorder.record(record)
                return
            except DomainError:
                raise
            except Exception:
                if attempt == RECORD_ATTEMPTS - 1:
                    raise
                log.exception("run %s: could not record %s; trying again", self.run_id, record.type)
                time.sleep(min(2.0 * (attempt + 1), 10.0))

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


def _forward_stderr(stream: IO[str] | None, run_id: str) -> None:
    if stream is None:
        return
    for line in stream:
        trainer_log.info("[run %s] %s", run_id[:8], line.rstrip())


def describe_exit(returncode: int | None) -> str:
    """Why a trainer process ended, in words: a signal's name, or its exit code."""
    if returncode is None:
        return "it stopped answering"
    if returncode < 0:
        name = signal.Signals(-returncode).name
        if -returncode == signal.SIGKILL:
            return f"it was killed ({name}), which is how a host ends a process that runs out of memory"
        return f"it was stopped by {name}"
    return f"it exited with code {returncode}"
