"""A custom metric as a Grader: the organization's Python runs in a sandbox worker, never in the trainer.

The worker (runtime/worker.py) is started once per metric, walled off by bubblewrap (isolation.py) with an empty
environment, and forks a locked-down child per batch of up to 8 answers; see runtime/jail.py for what a child
may do.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import threading
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from domain.rewards.types import FAILURE_KINDS, SCORED_BATCH, AnswerScore, FailureKind
from trainer.sandbox.isolation import (
    IsolationMissing,
    WorkerLaunch,
    check_layers,
    start_failure_words,
    weaker_isolation_accepted,
    worker_launch,
)
from trainer.sandbox.limits import SandboxLimits

WORKER_STOPPED = "the metric sandbox stopped: "


class SandboxError(RuntimeError):
    """The sandbox itself broke (not the metric): the worker died or answered nonsense."""


class _WorkerWouldNotStart(SandboxError):
    """Bubblewrap did not start the worker; the message is its last error line."""


@dataclass(frozen=True)
class GradedAnswer:
    """An answer's score with the reason of a failure in words, for logs and the reference check."""

    score: AnswerScore
    detail: str = ""


def _batches(answers: Sequence[str], references: Sequence[str], size: int) -> list[list[list[str]]]:
    return [
        [list(answers[start : start + size]), list(references[start : start + size])]
        for start in range(0, len(answers), size)
    ]


def _graded(outcome: dict[str, Any], count: int) -> list[GradedAnswer]:
    """Turns a worker's outcome for one batch into one GradedAnswer per answer."""
    failure = outcome.get("failure")
    if failure is not None:
        kind: FailureKind = failure if failure in FAILURE_KINDS else "execution"
        return [GradedAnswer(AnswerScore.failed(kind), str(outcome.get("detail", "")))] * count
    scores = outcome.get("scores")
    if not isinstance(scores, list) or len(scores) != count:
        return [GradedAnswer(AnswerScore.failed("execution"), "the metric's process reported garbage")] * count
    graded = []
    for entry in scores:
        if isinstance(entry, list) and len(entry) == 1 and isinstance(entry[0], int | float):
            value = float(entry[0])
            if 0.0 <= value <= 1.0:
                graded.append(GradedAnswer(AnswerScore(value=value)))
                continue
        if isinstance(entry, list) and len(entry) == 3 and entry[1] in ("execution", "result"):
            graded.append(GradedAnswer(AnswerScore.failed(entry[1]), str(entry[2])))
        else:
            graded.append(GradedAnswer(AnswerScore.failed("execution"), "the metric's process reported garbage"))
    return graded


def _batch_outcome(graded: Sequence[GradedAnswer]) -> str:
    """"scored" when no answer of the batch failed, else the kind of its first failure."""
    return next((g.score.failure for g in graded if g.score.failure is not None), SCORED_BATCH)


def _stop_worker(process: subprocess.Popen[bytes], host_folder: str | None, stderr: IO[bytes]) -> None:
    """Ends the worker and removes its folder; also run by the garbage collector if close() was forgotten."""
    if process.poll() is None:
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
    for stream in (process.stdout, stderr):
        if stream is not None:
            stream.close()
    if host_folder is not None:
        shutil.rmtree(host_folder, ignore_errors=True)


class SandboxedMetric:
    """Scores answers with an organization's `score(answer, reference)`, run in locked-down processes.

    >>> with SandboxedMetric("def score(answer, reference):\\n    return float(answer == reference)") as m:
    ...     [s.value for s in m.score_batch(["4", "5"], ["4", "4"])]
    [1.0, 0.0]
    """

    def __init__(self, source: str, *, name: str = "custom", limits: SandboxLimits = SandboxLimits()) -> None:
        """Starts the worker; raises IsolationMissing, in words, when it cannot be walled off as required."""
        self._name = name
        self._limits = limits
        self._lock = threading.Lock()
        self._batch_outcomes: Counter[str] = Counter()
        setup = {"source": source, "limits": limits.as_json()}
        try:
            self.isolation_layers = self._start(worker_launch(limits.scratch_bytes), setup)
        except _WorkerWouldNotStart as failure:  # bubblewrap is there, but the host refuses it namespaces
            if not weaker_isolation_accepted():
                raise IsolationMissing(start_failure_words(str(failure))) from None
            self.isolation_layers = self._start(worker_launch(limits.scratch_bytes, plain=True), setup)

    def _start(self, launch: WorkerLaunch, setup: dict[str, Any]) -> dict[str, str]:
        self._launch = launch
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _stop_worker
        self._process = subprocess.Popen(
            launch.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=launch.host_folder or "/",
            env=launch.environment,
        )
        self._finalizer = weakref.finalize(self, _stop_worker, self._process, launch.host_folder, self._stderr)
        try:
            layers: dict[str, str] = self._exchange({**setup, "scratch_root": launch.scratch_root})["layers"]
        except SandboxError as error:
            self.close()
            if launch.isolated:
                raise _WorkerWouldNotStart(str(error).removeprefix(WORKER_STOPPED)) from None
            raise
        try:
            check_layers(layers)
        except IsolationMissing:
            self.close()
            raise
        return layers

    @property
    def label(self) -> str:
        return self._name

    @property
    def batch_outcomes(self) -> Counter[str]:
        """The batches this sandbox has run, by outcome ("scored", or the kind of the batch's first failure): a
        copy, so a caller can take the difference over its own grading."""
        with self._lock:
            return Counter(self._batch_outcomes)

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        return [graded.score for graded in self.grade(answers, references)]

    def grade(self, answers: Sequence[str], references: Sequence[str]) -> list[GradedAnswer]:
        """Like score_batch, with each failure's reason in words."""
        if len(answers) != len(references):
            raise ValueError(f"{len(answers)} answers but {len(references)} references")
        if not answers:
            return []
        batches = _batches(answers, references, self._limits.batch_size)
        outcomes = self._exchange({"batches": batches})["outcomes"]
        graded: list[GradedAnswer] = []
        ran: Counter[str] = Counter()
        for (batch_answers, _), outcome in zip(batches, outcomes, strict=True):
            batch = _graded(outcome, len(batch_answers))
            ran[_batch_outcome(batch)] += 1
            graded.extend(batch)
        with self._lock:
            self._batch_outcomes.update(ran)
        return graded

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if not self._finalizer.alive:
                raise SandboxError("the metric sandbox is closed")
            stdin, stdout = self._process.stdin, self._process.stdout
            assert stdin is not None and stdout is not None
            try:
                stdin.write(json.dumps(message).encode() + b"\n")
                stdin.flush()
                line = stdout.readline()
            except OSError as error:
                # A worker that exits before reading (bubblewrap refused, say) breaks the pipe; what it printed
                # says why better than the broken pipe does.
                raise SandboxError(f"{WORKER_STOPPED}{self._worker_errors(fallback=str(error))}") from error
            if not line:
                raise SandboxError(f"{WORKER_STOPPED}{self._worker_errors()}")
            return json.loads(line)

    def _worker_errors(self, fallback: str | None = None) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):  # what it printed so far still says why
            self._process.wait(timeout=5)
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        if text:
            return text.splitlines()[-1]
        return fallback or f"exit status {self._process.returncode}"

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> SandboxedMetric:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
