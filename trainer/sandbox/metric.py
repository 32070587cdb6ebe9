"""A custom metric as a Grader: the organization's Python runs in a sandbox worker, never in the trainer.

The worker (runtime/worker.py) is started once per metric with an empty environment and forks a locked-down
child per batch of up to 8 answers; see runtime/jail.py for what a child may do.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from domain.rewards.types import AnswerScore, FailureKind
from trainer.sandbox.limits import SandboxLimits

WORKER_SCRIPT = Path(__file__).parent / "runtime" / "worker.py"
FAILURE_KINDS: frozenset[str] = frozenset({"execution", "result", "timeout", "memory", "output"})

# All the worker gets: none of the server's variables (no storage keys, tokens or database URLs).
WORKER_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}


class SandboxError(RuntimeError):
    """The sandbox itself broke (not the metric): the worker died or answered nonsense."""


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


def _stop_worker(process: subprocess.Popen[bytes], scratch_root: str, stderr: IO[bytes]) -> None:
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
    shutil.rmtree(scratch_root, ignore_errors=True)


class SandboxedMetric:
    """Scores answers with an organization's `score(answer, reference)`, run in locked-down processes.

    >>> with SandboxedMetric("def score(answer, reference):\\n    return float(answer == reference)") as m:
    ...     [s.value for s in m.score_batch(["4", "5"], ["4", "4"])]
    [1.0, 0.0]
    """

    def __init__(self, source: str, *, name: str = "custom", limits: SandboxLimits = SandboxLimits()) -> None:
        self._name = name
        self._limits = limits
        self._lock = threading.Lock()
        self._scratch_root = tempfile.mkdtemp(prefix="verity-sandbox-")
        Path(self._scratch_root).chmod(0o711)  # batch folders inside belong to the unprivileged user
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by _stop_worker
        self._process = subprocess.Popen(
            # -E -s rather than -I, which would also drop the script's own folder from sys.path
            [sys.executable, "-E", "-s", str(WORKER_SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=self._scratch_root,
            env={**WORKER_ENVIRONMENT, "HOME": self._scratch_root},
        )
        self._finalizer = weakref.finalize(self, _stop_worker, self._process, self._scratch_root, self._stderr)
        setup = {"source": source, "limits": limits.as_json(), "scratch_root": self._scratch_root}
        self.isolation_layers: dict[str, str] = self._exchange(setup)["layers"]

    @property
    def label(self) -> str:
        return self._name

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
        for (batch_answers, _), outcome in zip(batches, outcomes, strict=True):
            graded.extend(_graded(outcome, len(batch_answers)))
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
                raise SandboxError(f"the metric sandbox stopped: {error}") from error
            if not line:
                raise SandboxError(f"the metric sandbox stopped: {self._worker_errors()}")
            return json.loads(line)

    def _worker_errors(self) -> str:
        self._process.wait(timeout=5)
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        return text.splitlines()[-1] if text else f"exit status {self._process.returncode}"

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> SandboxedMetric:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
