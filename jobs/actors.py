"""Every actor of the jobs, declared once (names, queues, payloads, limits) on a broker given at worker boot or app
start, and `Jobs`, the one way to send them work.

Payloads are ids only:
- `launch_run(run_id)` and `launch_trial(run_id)` on the run's provider queue (one queue per Training provider;
  `local` always exists): train it in a supervised child process (jobs/launching.py);
- `merge_model(run_id)`, `evaluate(evaluation_id)`, `step_loop(loop_id)`, `step_experiment(experiment_id)` on the
  local provider's queue (jobs/merge.py, jobs/evaluations.py, jobs/steps.py), and `probe_reward(probe_id)` there
  too (jobs/probes.py), and `rescore_answers(rescoring_id)` (jobs/rescorings.py);
- `cancel_run(run_id, actor)` and `reconcile()` on the control queue, which is never stuck behind a training run.

Who sends: the dispatcher (jobs/dispatcher.py), following the event log, for what the console and the steps record;
the reconciler, for a Queued run whose message was lost; a step, to look again at a job another worker holds.
Every actor reloads what it works on and acts only where it still applies, so a message sent twice (the dispatcher
sends, then records how far it got: a crash between the two sends again) changes nothing. None retries by itself:
its work is recorded step by step, and what a dead worker leaves behind is the reconciler's to end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from uuid import UUID

import dramatiq

from domain.actors import Actor
from domain.runs.run import QUEUED
from jobs.broker import provider_queue
from jobs.config import CONTROL_QUEUE, DEFAULT_PROVIDER
from jobs.context import JOBS, JobContext
from jobs.evaluations import EVALUATION_TIME_LIMIT_SECONDS, run_evaluation
from jobs.launching import launch
from jobs.merge import MERGE_TIME_LIMIT_SECONDS, merge
from jobs.probes import PROBE_TIME_LIMIT_SECONDS, run_probe
from jobs.reconciler import reconcile
from jobs.recording import with_fresh_run
from jobs.rescorings import RESCORE_TIME_LIMIT_SECONDS, run_rescoring
from jobs.steps import step_experiment, step_loop

log = logging.getLogger(__name__)

HOUR_MS = 3600 * 1000
# A GPU call can't be interrupted by Dramatiq's time limit anyway; the supervisor's watchdog enforces each job's
# own limit (a run's Time limit, at most 168 hours; an evaluation's 24 hours; a merge's 6), so an actor's limit
# only has to stay out of its way. A step trains a loop's or an experiment's run in its own thread: a run's limit.
LAUNCH_TIME_LIMIT_MS = 8 * 24 * HOUR_MS
EVALUATE_TIME_LIMIT_MS = EVALUATION_TIME_LIMIT_SECONDS * 1000 + HOUR_MS
MERGE_TIME_LIMIT_MS = MERGE_TIME_LIMIT_SECONDS * 1000 + HOUR_MS
PROBE_TIME_LIMIT_MS = PROBE_TIME_LIMIT_SECONDS * 1000 + HOUR_MS
RESCORE_TIME_LIMIT_MS = RESCORE_TIME_LIMIT_SECONDS * 1000 + HOUR_MS


@dataclass
class Jobs:
    """The declared actors of one broker, and the way to send them work (the dispatcher's outbox)."""

    broker: dramatiq.Broker
    ctx: JobContext
    launch_run: dramatiq.Actor
    launch_trial: dramatiq.Actor
    cancel_run: dramatiq.Actor
    reconcile: dramatiq.Actor
    merge_model: dramatiq.Actor
    evaluate: dramatiq.Actor
    step_loop: dramatiq.Actor
    step_experiment: dramatiq.Actor
    probe_reward: dramatiq.Actor
    rescore_answers: dramatiq.Actor

    def send_launch(self, run_id: UUID) -> dramatiq.Message | None:
        """Put a Queued run on its provider's queue, say so in its timeline, and note it in the ledger."""
        run = self.ctx.verity.get_run(None, run_id)
        if run.state != QUEUED:
            return None
        queue = provider_queue(run.settings.provider)
        actor = self.launch_trial if run.is_trial else self.launch_run
        with_fresh_run(
            self.ctx.verity,
            run_id,
            lambda fresh: self.ctx.verity.record_queued(run_id, JOBS) if fresh.state == QUEUED else None,
        )
        self.broker.declare_queue(queue)
        message = self.broker.enqueue(actor.message(str(run_id)).copy(queue_name=queue))
        self.ctx.ledger.enqueued(run_id, queue)
        log.info("run %s put on queue %s", run_id, queue)
        return message

    def send_cancel(self, run_id: UUID, actor: Actor) -> None:
        self.cancel_run.send(str(run_id), actor.to_dict())

    def send_merge(self, run_id: UUID) -> dramatiq.Message:
        return self.merge_model.send(str(run_id))

    def send_evaluation(self, evaluation_id: UUID) -> dramatiq.Message:
        return self.evaluate.send(str(evaluation_id))

    def send_probe(self, probe_id: UUID) -> dramatiq.Message:
        return self.probe_reward.send(str(probe_id))

    def send_rescoring(self, rescoring_id: UUID) -> dramatiq.Message:
        return self.rescore_answers.send(str(rescoring_id))

    def send_loop_step(self, loop_id: UUID, delay_seconds: float | None = None) -> dramatiq.Message:
        return _send(self.step_loop, loop_id, delay_seconds)

    def send_experiment_step(self, experiment_id: UUID, delay_seconds: float | None = None) -> dramatiq.Message:
        return _send(self.step_experiment, experiment_id, delay_seconds)


def _send(actor: dramatiq.Actor, aggregate_id: UUID, delay_seconds: float | None) -> dramatiq.Message:
    delay = int(delay_seconds * 1000) if delay_seconds else None
    return actor.send_with_options(args=(str(aggregate_id),), delay=delay)


def declare_actors(broker: dramatiq.Broker, ctx: JobContext, on_child: Callable | None = None) -> Jobs:
    """Declares every actor on `broker`. `on_child` sees each trainer process a launch starts (tests use it)."""

    def launch_run(run_id: str) -> None:
        launch(ctx, UUID(run_id), on_child)

    def launch_trial(run_id: str) -> None:
        launch(ctx, UUID(run_id), on_child)

    def cancel_run(run_id: str, actor: dict[str, str]) -> None:
        """A cancel sent through the broker (an agent, another service): record it; the supervisor polling the
        run stops the trainer within a second or so."""
        who = Actor.from_dict(actor)
        with_fresh_run(ctx.verity, UUID(run_id), lambda run: ctx.verity.cancel_run(run.org_id, run.id, who))

    def reconcile_runs() -> None:
        reconcile(ctx, jobs.send_launch if ctx.read_models is not None else None)

    def merge_run(run_id: str) -> None:
        merge(ctx, UUID(run_id))

    def evaluate(evaluation_id: str) -> None:
        run_evaluation(ctx, UUID(evaluation_id))

    def probe_reward(probe_id: str) -> None:
        run_probe(ctx, UUID(probe_id))

    def rescore_answers(rescoring_id: str) -> None:
        run_rescoring(ctx, UUID(rescoring_id))

    def loop_step(loop_id: str) -> None:
        step_loop(ctx, UUID(loop_id), lambda again: jobs.send_loop_step(again, ctx.config.reconcile_every_seconds))

    def experiment_step(experiment_id: str) -> None:
        step_experiment(
            ctx, UUID(experiment_id),
            lambda again: jobs.send_experiment_step(again, ctx.config.reconcile_every_seconds),
        )

    options = {"broker": broker, "max_retries": 0}
    local = {**options, "queue_name": DEFAULT_PROVIDER}
    control = {**options, "queue_name": CONTROL_QUEUE}
    trains = {**local, "time_limit": LAUNCH_TIME_LIMIT_MS}
    jobs = Jobs(
        broker=broker,
        ctx=ctx,
        launch_run=dramatiq.actor(launch_run, actor_name="launch_run", notify_shutdown=True, **trains),
        launch_trial=dramatiq.actor(launch_trial, actor_name="launch_trial", notify_shutdown=True, **trains),
        cancel_run=dramatiq.actor(cancel_run, actor_name="cancel_run", **control),
        reconcile=dramatiq.actor(reconcile_runs, actor_name="reconcile", **control),
        merge_model=dramatiq.actor(
            merge_run, actor_name="merge_model", time_limit=MERGE_TIME_LIMIT_MS, notify_shutdown=True, **local
        ),
        evaluate=dramatiq.actor(evaluate, actor_name="evaluate", time_limit=EVALUATE_TIME_LIMIT_MS, **local),
        step_loop=dramatiq.actor(loop_step, actor_name="step_loop", **trains),
        step_experiment=dramatiq.actor(experiment_step, actor_name="step_experiment", **trains),
        probe_reward=dramatiq.actor(probe_reward, actor_name="probe_reward", time_limit=PROBE_TIME_LIMIT_MS,
                                    **local),
        rescore_answers=dramatiq.actor(rescore_answers, actor_name="rescore_answers",
                                       time_limit=RESCORE_TIME_LIMIT_MS, **local),
    )
    return jobs
