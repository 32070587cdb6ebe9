"""The launch actor's work: claim a Queued run, prepare it, train it in a supervised child process, record how
it ended. It takes an id and reloads everything from the event store, so a message delivered twice, or after the
run was cancelled, changes nothing.
"""

from __future__ import annotations

import logging
import os
import time
from uuid import UUID

from dramatiq.middleware import Shutdown

from domain.errors import NotFound
from domain.runs.run import CANCELLED, QUEUED, RUNNING
from jobs.broker import provider_queue
from jobs.config import DEFAULT_PROVIDER
from jobs.context import JobContext
from jobs.reconciler import end_orphan
from jobs.recording import ProgressRecorder, with_fresh_run
from jobs.run_storage import StorageUnreadable, run_storage
from jobs.specs import SpecUnbuildable, build_run_spec
from jobs.supervisor import Child, Outcome, Supervisor, describe_exit, timing_of
from jobs.tune_specs import build_tune_spec
from verity.log_format import bind_run

log = logging.getLogger(__name__)


WORKER_STOPPED = (
    "The worker training this run was stopped (its machine shut down or the worker was restarted), so the run "
    "was ended. Retry starts the run again from round 1."
)  # a full run with a checkpoint resumes instead (domain/runs/run_resume.py)


def over_price_limit(price: float, limit: float) -> str:
    return (
        f"This provider's worker costs ${price:g}/hour, above the run's Price limit (${limit:g}/hour). Choose "
        "another training provider or raise the Price limit."
    )


def watchdog_message(grace_seconds: float) -> str:
    return (
        f"The trainer was still running {grace_seconds:g} seconds after the time limit, so the watchdog stopped "
        "it before it saved an adapter. Raise the Time limit (hours), or run a trial to see how long a round takes."
    )


def trainer_died_message(returncode: int | None) -> str:
    return (
        f"The trainer process stopped before the run ended: {describe_exit(returncode)}. Its last lines are in "
        "the worker's log. Retry starts the run again from round 1."
    )


def launch(ctx: JobContext, run_id: UUID, on_child=None) -> None:
    """Train the run if it is still Queued and no live worker holds it."""
    try:
        run = ctx.verity.get_run(None, run_id)
    except NotFound:
        ctx.ledger.release(run_id)
        return
    with bind_run(run.org_id, run_id):  # every record logged while it trains names the run (JSON logs)
        _launch(ctx, run, on_child)


def _launch(ctx: JobContext, run, on_child) -> None:
    ledger, run_id = ctx.ledger, run.id
    if run.state != QUEUED:  # a message delivered again: act only where no live worker holds the run
        lease = ledger.lease(run_id)
        unheld = lease is None or lease.is_stale(time.time(), ctx.config.stale_after_seconds)
        if run.state in RUNNING and unheld:
            end_orphan(ctx, run_id, lease)  # the worker that had it died
        elif run.state not in RUNNING and (unheld or lease.worker_id is None):
            ledger.release(run_id)
        return
    queue = provider_queue(run.settings.provider)
    if not ledger.claim(run_id, queue, ctx.worker_id, os.getpid(), ctx.config.stale_after_seconds):
        log.info("run %s is held by another worker", run_id)
        return
    try:
        _prepare_and_train(ctx, run_id, on_child)
    except Shutdown:  # the worker is stopping: its trainer is already stopped; say so rather than go silent
        with_fresh_run(ctx.verity, run_id, lambda run: _resume_or_fail(ctx, run))
    except Exception:
        # e.g. the database went away: the claim stays and goes stale, so the reconciler ends the run with the
        # reason once it can; the message is not retried (a retry never repeats recorded work)
        log.exception("run %s: the worker failed while it supervised the run", run_id)
        return
    ledger.release(run_id, ctx.worker_id)


def _resume_or_fail(ctx: JobContext, run) -> None:
    """The worker stops (a restart, a machine shutting down): a run with a checkpoint goes back on its queue, to
    go on from its last round on the next worker (the restarted console's, or another); any other fails saying so."""
    if run.state not in RUNNING or run.state == QUEUED:
        return
    if run.resume_refusal() is None:
        ctx.verity.record_resumed(run.id, ctx.worker_words, ctx.worker_actor)
        log.warning("run %s: this worker stops; the run resumes from round %s", run.id, run.last_round)
    else:
        ctx.verity.record_failed(run.id, WORKER_STOPPED, ctx.worker_actor)


def _prepare_and_train(ctx: JobContext, run_id: UUID, on_child) -> None:
    verity, config, actor = ctx.verity, ctx.config, ctx.worker_actor
    if not with_fresh_run(verity, run_id, lambda run: verity.record_preparing(run_id, actor)):
        return  # cancelled while it waited
    run = verity.get_run(None, run_id)
    limit = run.settings.price_limit_per_hour
    price = price_per_hour(ctx, run)
    if limit is not None and price is not None and price > limit:
        verity.record_failed(run_id, over_price_limit(price, limit), actor)
        return
    try:
        storage = run_storage(ctx.settings, verity, run.org_id)
        build = build_run_spec if run.objective == "rl" else build_tune_spec  # SFT and DPO: jobs/tune_specs.py
        spec = build(verity, run, ctx.settings, config, price_per_hour=price, storage=storage.storage)
    except (SpecUnbuildable, StorageUnreadable) as unbuildable:
        message = str(unbuildable)
        with_fresh_run(verity, run_id, lambda run: verity.record_failed(run_id, message, actor))
        return
    supervisor = Supervisor(
        Child("run", spec.to_dict(), f"run {str(run_id)[:8]}"),
        ProgressRecorder(verity, run_id),
        timing_of(config),
        kill_at=spec.deadline + config.watchdog_grace_seconds,
        cancelled=lambda: verity.get_run(None, run_id).state == CANCELLED,
        beat=lambda: ctx.ledger.beat(run_id, ctx.worker_id),
        on_child=on_child,
        environment=storage.child_environment,
    )
    outcome = supervisor.run()
    log.info("run %s: supervision ended (%s, exit %s)", run_id, outcome.reason, outcome.returncode)
    _record_ending(ctx, run_id, outcome)


def price_per_hour(ctx: JobContext, run) -> float | None:
    """The price the run was launched against: its provider's, as an owner declared it; for `local` (which no
    owner prices) or a provider no longer declared, this worker's own (VERITY_WORKER_PRICE_PER_HOUR)."""
    name = provider_queue(run.settings.provider)
    if name != DEFAULT_PROVIDER:
        for provider in ctx.verity.providers(run.org_id):
            if provider.name == name:
                return provider.price_per_hour
    return ctx.config.worker_price_per_hour


def _record_ending(ctx: JobContext, run_id: UUID, outcome: Outcome) -> None:
    """The trainer said nothing of how the run ended: say it, unless the run already ended (a cancel, an adapter
    already kept, the reconciler)."""
    verity, actor = ctx.verity, ctx.worker_actor
    if outcome.reason in ("cancelled", "lost"):
        return
    if outcome.reason == "watchdog":
        message = watchdog_message(ctx.config.watchdog_grace_seconds)
    elif outcome.reason == "died":
        message = trainer_died_message(outcome.returncode)
    else:
        message = trainer_died_message(outcome.returncode) if outcome.returncode else None

    def fail(run) -> None:
        if run.state in RUNNING and message is not None:
            verity.record_failed(run_id, message, actor)

    with_fresh_run(verity, run_id, fail)
