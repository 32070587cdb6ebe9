"""Evaluations as jobs: the spec from the event store, `python -m trainer evaluate` as a supervised child process,
its progress lines turned into domain commands; and the actors of evaluations and training loops.

Payloads are ids only: `evaluate(evaluation_id)`, `step_loop(loop_id)`, `step_experiment(experiment_id)`.
All go on the local provider's queue.
A loop's actor does one step (train a round's run, or benchmark it) and sends itself again for the next one;
`advance_loop` in the domain decides the step from the state of the run or evaluation the loop owns.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import dramatiq

from domain.actors import Actor
from domain.errors import ConcurrentChange, IllegalTransition, NotFound
from domain.evaluations.benchmarks import math_pairs_held_out_rows
from domain.evaluations.evaluation import CANCELLED, QUEUED, Evaluation
from jobs.config import DEFAULT_PROVIDER
from jobs.context import JobContext
from jobs.run_storage import RunStorage, StorageUnreadable, run_storage
from jobs.specs import SpecUnbuildable, _project_revision, _reward_spec, run_revision
from trainer.evaluate import EvaluationSpec
from trainer.spec import ModelRef, Row, StartAdapter
from verity.storage import open_storage as open_file_storage
from verity.storage import read_rows

log = logging.getLogger(__name__)
EVALUATOR = Actor("system", "evaluator", "Evaluator")
TIME_LIMIT_MS = 24 * 3600 * 1000


def test_rows(ctx: JobContext, evaluation: Evaluation) -> list[dict]:
    """The evaluation's test examples: a version's test split (read from storage), or a benchmark's problems."""
    source = evaluation.source
    if source["kind"] == "benchmark":
        return list(math_pairs_held_out_rows(int(source.get("count", 64))))
    version = ctx.verity.get_dataset_version(evaluation.org_id, UUID(source["id"]))
    rows = list(read_rows(open_file_storage(ctx.settings), version.storage_key, "test"))
    if not rows:
        raise SpecUnbuildable(f"The storage holds none of {version.label}'s test examples.")
    return rows


def model_revision(ctx: JobContext, evaluation: Evaluation) -> str | None:
    """An adapter is scored on the revision its run trained on (an adapter on another revision's weights would
    score something no one trained); the base model on the project's."""
    if evaluation.adapter_run is not None:
        try:
            return run_revision(ctx.verity, ctx.verity.get_run(evaluation.org_id, evaluation.adapter_run))
        except NotFound:
            pass  # the run is gone: the project's revision is the best guess left
    return _project_revision(ctx.verity, evaluation)  # type: ignore[arg-type]


def build_evaluation_spec(ctx: JobContext, evaluation: Evaluation, storage: RunStorage | None = None) -> EvaluationSpec:
    """`storage`: the organization's (where its runs' adapters are); the server's default when None."""
    reward = {**evaluation.scoring, "metric": evaluation.main_metric}
    adapter = evaluation.adapter
    storage = storage or run_storage(ctx.settings, ctx.verity, evaluation.org_id)
    return EvaluationSpec(
        evaluation_id=str(evaluation.id),
        model=ModelRef(path_or_id=evaluation.model, revision=model_revision(ctx, evaluation)),
        rows=[Row(prompt=list(r["prompt"]), reference=r["reference"]) for r in test_rows(ctx, evaluation)],
        reward=_reward_spec(ctx.verity, evaluation.org_id, reward),
        storage=storage.storage,
        adapter=StartAdapter(adapter["location"], adapter["sha256"], int(adapter["size_bytes"])) if adapter else None,
        max_answer_tokens=evaluation.max_answer_tokens,
    )


def _apply(command) -> bool:
    """A command on the evaluation as it is now; False when it no longer applies (cancelled meanwhile)."""
    for attempt in range(5):
        try:
            command()
            return True
        except IllegalTransition as refusal:
            log.info("evaluation: %s", refusal.message)
            return False
        except ConcurrentChange:
            time.sleep(0.05 * (attempt + 1))
    return False


def run_evaluation(ctx: JobContext, evaluation_id: UUID) -> None:
    """Score the evaluation if it is still Queued; every outcome is recorded on it."""
    verity = ctx.verity
    try:
        evaluation = verity.get_evaluation(None, evaluation_id)
    except NotFound:
        return
    if evaluation.state != QUEUED or not _apply(lambda: verity.record_evaluation_started(evaluation_id, EVALUATOR)):
        return
    try:
        storage = run_storage(ctx.settings, verity, evaluation.org_id)
        spec = build_evaluation_spec(ctx, evaluation, storage)
    except (SpecUnbuildable, StorageUnreadable, NotFound, OSError) as problem:
        message = (
            str(problem)
            if isinstance(problem, (SpecUnbuildable, StorageUnreadable))
            else f"The test examples could not be read ({type(problem).__name__})."
        )
        _apply(lambda: verity.record_evaluation_failed(evaluation_id, message, EVALUATOR))
        return
    ended = _supervise(ctx, spec, storage)
    if not ended:
        _apply(lambda: verity.record_evaluation_failed(
            evaluation_id, "The evaluator process stopped before the evaluation ended; its last lines are in the "
            "worker's log.", EVALUATOR))


def _supervise(ctx: JobContext, spec: EvaluationSpec, storage: RunStorage) -> bool:
    """Runs the evaluator; records its lines; stops it on a cancel. True when it said how the evaluation ended.
    The storage's credentials reach the child only through its environment, as a run's do (jobs/run_storage.py)."""
    evaluation_id = UUID(spec.evaluation_id)
    verity = ctx.verity
    ended = False
    with tempfile.TemporaryDirectory(prefix="verity-evaluation-") as folder:
        spec_path = Path(folder) / "spec.json"
        spec_path.write_text(json.dumps(spec.to_dict()))
        child = subprocess.Popen(
            [sys.executable, "-m", "trainer", "evaluate", str(spec_path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            start_new_session=True, env=storage.child_environment({**os.environ, "PYTHONUNBUFFERED": "1"}),
        )
        threading.Thread(target=_forward_stderr, args=(child, spec.evaluation_id), daemon=True).start()
        watcher = threading.Thread(target=_stop_on_cancel, args=(ctx, evaluation_id, child), daemon=True)
        watcher.start()
        assert child.stdout is not None
        for line in child.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") == "evaluation_completed":
                ended = True
                _apply(lambda r=record: verity.record_evaluation_completed(
                    evaluation_id, float(r["score"]), r["breakdown"], r["results"], EVALUATOR,
                    metric_failures=r.get("metric_failures")))
            elif record.get("type") == "failed":
                ended = True
                _apply(lambda r=record: verity.record_evaluation_failed(evaluation_id, r["message"], EVALUATOR))
        child.wait()
    return ended or verity.get_evaluation(None, evaluation_id).state == CANCELLED


def _stop_on_cancel(ctx: JobContext, evaluation_id: UUID, child: subprocess.Popen) -> None:
    while child.poll() is None:
        if ctx.verity.get_evaluation(None, evaluation_id).state == CANCELLED:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            return
        time.sleep(ctx.config.cancel_poll_seconds)


def _forward_stderr(child: subprocess.Popen, evaluation_id: str) -> None:
    if child.stderr is not None:
        for line in child.stderr:
            log.info("[evaluation %s] %s", evaluation_id[:8], line.rstrip())


@dataclass
class EvaluationJobs:
    """The declared actors; `send_evaluation` and `send_loop_step` are what the app calls after a command."""

    evaluate: dramatiq.Actor
    step_loop: dramatiq.Actor
    step_experiment: dramatiq.Actor

    def send_evaluation(self, evaluation_id: UUID) -> None:
        self.evaluate.send(str(evaluation_id))

    def send_loop_step(self, loop_id: UUID) -> None:
        self.step_loop.send(str(loop_id))

    def send_experiment_step(self, experiment_id: UUID) -> None:
        self.step_experiment.send(str(experiment_id))


def declare_evaluation_actors(broker: dramatiq.Broker, ctx: JobContext) -> EvaluationJobs:
    from jobs.experiments import step_experiment
    from jobs.loops import step_loop

    def evaluate(evaluation_id: str) -> None:
        run_evaluation(ctx, UUID(evaluation_id))

    def step(loop_id: str) -> None:
        step_loop(ctx, UUID(loop_id), jobs.send_loop_step)

    def experiment_step(experiment_id: str) -> None:
        step_experiment(ctx, UUID(experiment_id), jobs.send_experiment_step)

    options = {"broker": broker, "max_retries": 0, "time_limit": TIME_LIMIT_MS, "queue_name": DEFAULT_PROVIDER}
    jobs = EvaluationJobs(
        evaluate=dramatiq.actor(evaluate, actor_name="evaluate", **options),
        step_loop=dramatiq.actor(step, actor_name="step_loop", **options),
        step_experiment=dramatiq.actor(experiment_step, actor_name="step_experiment", **options),
    )
    return jobs
