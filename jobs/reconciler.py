"""No run is left stuck: the reconciler ends runs whose worker stopped beating, and puts back on their queue the
Queued runs whose message was lost (an in-memory queue after a restart, a send that failed, a broker that lost
its data).

It runs at start-up and every few seconds in the web process and in every worker; two reconcilers racing on one
run are harmless, since the domain refuses to end a run twice. A launch the dispatcher has yet to send is the
dispatcher's (jobs/dispatcher.py): the reconciler looks for runs the ledger never heard of only once the dispatcher
has sent what the read models show.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from uuid import UUID

from domain.errors import NotFound
from domain.runs import alarms
from domain.runs.run import ADAPTER_READY, QUEUED, RUNNING, SAVING_ADAPTER, TRAINING, Run
from jobs.context import RECONCILER, JobContext
from jobs.counters import RECONCILER_ACTIONS
from jobs.kept_adapter import find_kept_adapter
from jobs.ledger import Lease
from jobs.orphan_work import reconcile_work
from jobs.periodic import Periodic
from jobs.recording import with_fresh_run
from jobs.run_storage import run_storage

log = logging.getLogger(__name__)

Send = Callable[[UUID], object]
Position = Callable[[], int]


def lost_worker(lease: Lease | None) -> str:
    """The lost worker in words, as the timeline and the failure name it."""
    if lease is None or lease.beat_at is None:
        return "The worker running this run"
    return f"The worker running this run ({lease.host}, process {lease.pid})"


def orphan_message(lease: Lease | None, last_round: int | None, gave_up: str | None = None) -> str:
    """`gave_up`: why the run was not resumed again (domain/runs/run_resume.py), when it was resumed before."""
    if lease is None or lease.beat_at is None:
        since = "stopped sending heartbeats"
    else:
        since = f"stopped sending heartbeats at {datetime.fromtimestamp(lease.beat_at, UTC).strftime('%H:%M:%S UTC')}"
    kept = "Nothing was trained yet" if not last_round else f"Rounds after round {last_round} were lost"
    return (
        f"{lost_worker(lease)} {since}: it stopped or lost its connection, so the reconciler ended the run. "
        f"{kept}, and no adapter was kept. {gave_up + ' ' if gave_up else ''}Retry starts the run again from round 1."
    )


KEPT_ADAPTER_NOTE = (
    "The worker stopped sending heartbeats after the adapter was saved whole; the run keeps it (checksum and size "
    "read from the storage)."
)


def end_orphan(ctx: JobContext, run_id: UUID, lease: Lease | None) -> bool:
    """A running run whose worker is gone: Adapter ready when its adapter was already saved whole (and Completed
    when that was after its last round); back on its queue when its last finished round left a checkpoint (the
    dispatcher sends it again, and the next worker goes on from that round: domain/runs/run_resume.py); else
    Failed with the reason. True when this call ended it."""
    verity = ctx.verity

    def forget_lost_worker() -> None:
        # Only the lost worker's claim: once the run is back on its queue, the row the dispatcher writes for its
        # message (or the next worker's claim) is another's, and forgetting it would have the run sent twice.
        if lease is not None:
            ctx.ledger.release(run_id, lease.worker_id)

    def fail_or_resume(run) -> None:
        if run.state not in RUNNING or run.state == QUEUED:
            return
        if run.resume_refusal() is None:
            forget_lost_worker()  # before the run is Queued again, so its message's row starts afresh
            verity.record_resumed(run_id, lost_worker(lease), RECONCILER)
            RECONCILER_ACTIONS.labels("resumed").inc()
            log.warning("run %s: its worker stopped beating; it resumes from round %s", run_id, run.last_round)
        else:
            message = orphan_message(lease, run.last_round, run.gave_up_resuming())
            verity.record_failed(run_id, message, RECONCILER)
            RECONCILER_ACTIONS.labels("failed").inc()

    if _keep_saved_adapter(ctx, run_id):
        ctx.ledger.release(run_id)
        RECONCILER_ACTIONS.labels("kept_adapter").inc()
        log.warning("run %s: its worker stopped beating after it saved the adapter; the reconciler kept it", run_id)
        return True

    before = verity.get_run(None, run_id).state
    with_fresh_run(verity, run_id, fail_or_resume)
    ended = before in RUNNING and verity.get_run(None, run_id).state not in RUNNING
    forget_lost_worker()
    if ended:
        log.warning("run %s: its worker stopped beating; the reconciler ended it", run_id)
    return ended


def _keep_saved_adapter(ctx: JobContext, run_id: UUID) -> bool:
    verity = ctx.verity
    run = verity.get_run(None, run_id)
    all_rounds = run.last_round is not None and run.last_round >= run.total_rounds
    may_keep = run.state == SAVING_ADAPTER or (run.state == TRAINING and all_rounds)
    if run.is_trial or not may_keep or run.best_round is None:
        return False
    try:
        kept = find_kept_adapter(run_storage(ctx.settings, verity, run.org_id), str(run_id))
    except Exception:  # the storage can't be read now (or its secret opened): the run fails with the reason instead
        log.exception("run %s: could not look for its saved adapter", run_id)
        return False
    if kept is None:
        return False

    def adapter_ready(fresh) -> None:
        if fresh.state in (TRAINING, SAVING_ADAPTER):
            verity.record_adapter_ready(
                run_id, fresh.best_round, kept.location, kept.sha256, kept.size_bytes, RECONCILER,
                note=KEPT_ADAPTER_NOTE,
            )

    with_fresh_run(verity, run_id, adapter_ready)
    run = verity.get_run(None, run_id)
    if run.state == ADAPTER_READY and run.stop is None and all_rounds:
        with_fresh_run(verity, run_id, lambda fresh: verity.record_completed(run_id, RECONCILER))
    return run.state not in RUNNING


def report_quiet(ctx: JobContext, run: Run, lease: Lease, now: float) -> bool:
    """The quiet run's alarm (domain/runs/alarms.py): a training run of which nothing was heard, neither a round
    (nor any event of it) nor its worker's heartbeat, for longer than its slowest round x the margin, and than two
    heartbeats (a round of a second is no reason to call a run quiet between two beats). True when this call raised
    it."""
    if run.state != TRAINING or alarms.QUIET in run.alarms:
        return False
    heard_at = max(run.modified_on.timestamp(), lease.beat_at or 0.0)
    quiet, at_least = now - heard_at, 2 * ctx.config.heartbeat_seconds
    if alarms.quiet_alarm(quiet, run.alarm_watch["slowest_seconds"], "", at_least) is None:
        return False
    since = datetime.fromtimestamp(heard_at, UTC).strftime("%H:%M:%S UTC")
    with_fresh_run(ctx.verity, run.id,
                   lambda fresh: ctx.verity.record_quiet(run.id, quiet, since, RECONCILER, at_least))
    RECONCILER_ACTIONS.labels("quiet").inc()
    log.warning("run %s: nothing heard for %.0f s; the quiet run's alarm is raised", run.id, quiet)
    return True


def reconcile(
    ctx: JobContext, send: Send | None = None, *, startup_of_embedded: bool = False, sent_to: Position | None = None
) -> list[UUID]:
    """One pass; returns the runs it ended. `startup_of_embedded`: this process is the only worker and just
    started, so every earlier claim is a dead process's and every Queued run's message is gone. `sent_to`: how far
    the dispatcher has sent (jobs/dispatcher.py)."""
    ledger, verity, config = ctx.ledger, ctx.verity, ctx.config
    now = time.time()
    ended: list[UUID] = []
    known: set[UUID] = set()
    for lease in ledger.leases():
        known.add(lease.run_id)
        try:
            run = verity.get_run(None, lease.run_id)
        except NotFound:
            ledger.release(lease.run_id)
            continue
        dead = lease.is_stale(now, config.stale_after_seconds) or (startup_of_embedded and lease.worker_id)
        if run.state not in RUNNING:
            # Ended meanwhile. A live worker still holding it is finishing (the last rollouts go after the
            # adapter, and the trainer exits after it said how the run ended): it lets go itself.
            if lease.worker_id is None or dead:
                ledger.release(lease.run_id)
            continue
        if run.state == QUEUED:
            waited_long = (lease.enqueued_at or 0.0) < now - config.requeue_after_seconds
            if send is not None and lease.worker_id is None and (startup_of_embedded or waited_long):
                send(lease.run_id)
                RECONCILER_ACTIONS.labels("requeued").inc()
            elif send is not None and dead:  # its worker died before it started the run
                ledger.release(lease.run_id)
                send(lease.run_id)
                RECONCILER_ACTIONS.labels("requeued").inc()
            continue
        report_quiet(ctx, run, lease, now)  # before it may end: the timeline says it went quiet first
        if dead and end_orphan(ctx, lease.run_id, lease):
            ended.append(lease.run_id)
    if send is not None and ctx.read_models is not None:
        ended += _unlisted_runs(ctx, known, send, sent_to)
    reconcile_work(ctx, now, startup_of_embedded=startup_of_embedded)  # evaluations, probes, re-scorings
    return ended


def _unlisted_runs(ctx: JobContext, known: set[UUID], send: Send, sent_to: Position | None) -> list[UUID]:
    """Runs the read models show Queued or running that the ledger never heard of: a launch whose message was
    never sent, or a run whose worker vanished before it claimed it."""
    assert ctx.read_models is not None
    ended = []
    unlisted = [(row.id, ctx.verity.get_run(None, row.id).state)  # the read model may lag the event store
                for row in ctx.read_models.live_runs() if row.id not in known]
    if sent_to is not None and sent_to() < (ctx.verity.recorder.max_notification_id() or 0):
        # The dispatcher has yet to send what an event recorded before this may ask for: a launch these rows show,
        # or a resume that made a run Queued after the read models saw it. It is the dispatcher's to send.
        return []
    for run_id, state in unlisted:
        if ctx.ledger.lease(run_id) is not None:
            continue
        if state == QUEUED:
            send(run_id)
            RECONCILER_ACTIONS.labels("requeued").inc()
        elif state in RUNNING and end_orphan(ctx, run_id, None):
            ended.append(run_id)
    return ended


def periodic_reconciler(ctx: JobContext, send: Send | None, every: float,
                        sent_to: Position | None = None) -> Periodic:
    """`reconcile` every `every` seconds in a daemon thread, once started, until stopped."""
    return Periodic("verity-reconciler", every, lambda: reconcile(ctx, send, sent_to=sent_to),
                    "the reconciler's pass failed")
