"""The actors, declared once (names, queues, payloads) on a broker given at worker boot or app start.

Payloads are ids only: `launch_run(run_id)`, `launch_trial(run_id)`, `cancel_run(run_id, actor)`,
`reconcile()`. A launch goes on its run's provider queue (one queue per Training provider; `local` always
exists); cancels and reconciles go on the control queue, which is never stuck behind a training run.
A launch never retries by itself: its work is recorded step by step, and what a dead worker leaves behind is the
reconciler's to end.
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
from jobs.context import JobContext
from jobs.launching import launch
from jobs.reconciler import reconcile
from jobs.recording import with_fresh_run

log = logging.getLogger(__name__)

JOBS = Actor("system", "jobs", "Jobs")
# A GPU call can't be interrupted by Dramatiq's time limit anyway; the supervisor's watchdog enforces the run's
# own Time limit (at most 168 hours), so the actor's limit only has to stay out of its way.
LAUNCH_TIME_LIMIT_MS = 8 * 24 * 3600 * 1000


@dataclass
class Jobs:
    """The declared actors of one broker, and the way to send them work."""

    broker: dramatiq.Broker
    ctx: JobContext
    launch_run: dramatiq.Actor
    launch_trial: dramatiq.Actor
    cancel_run: dramatiq.Actor
    reconcile: dramatiq.Actor

    def send_launch(self, run_id: UUID) -> None:
        """Put a launched run on its provider's queue, say so in its timeline, and note it in the ledger."""
        run = self.ctx.verity.get_run(None, run_id)
        if run.state != QUEUED:
            return
        queue = provider_queue(run.settings["training"].get("provider"))
        actor = self.launch_trial if run.is_trial else self.launch_run
        with_fresh_run(
            self.ctx.verity,
            run_id,
            lambda fresh: self.ctx.verity.record_queued(run_id, JOBS) if fresh.state == QUEUED else None,
        )
        self.broker.declare_queue(queue)
        self.broker.enqueue(actor.message(str(run_id)).copy(queue_name=queue))
        self.ctx.ledger.enqueued(run_id, queue)
        log.info("run %s put on queue %s", run_id, queue)

    def send_cancel(self, run_id: UUID, actor: Actor) -> None:
        self.cancel_run.send(str(run_id), actor.to_dict())


def declare_actors(broker: dramatiq.Broker, ctx: JobContext, on_child: Callable | None = None) -> Jobs:
    """Declares the actors on `broker`. `on_child` sees each trainer process a launch starts (tests use it)."""

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

    options = {"broker": broker, "max_retries": 0}
    launch_options = {**options, "time_limit": LAUNCH_TIME_LIMIT_MS, "notify_shutdown": True}
    jobs = Jobs(
        broker=broker,
        ctx=ctx,
        launch_run=dramatiq.actor(launch_run, actor_name="launch_run", queue_name=DEFAULT_PROVIDER, **launch_options),
        launch_trial=dramatiq.actor(
            launch_trial, actor_name="launch_trial", queue_name=DEFAULT_PROVIDER, **launch_options
        ),
        cancel_run=dramatiq.actor(cancel_run, actor_name="cancel_run", queue_name=CONTROL_QUEUE, **options),
        reconcile=dramatiq.actor(reconcile_runs, actor_name="reconcile", queue_name=CONTROL_QUEUE, **options),
    )
    return jobs
