"""No evaluation, reward probe or re-scoring is left live forever by a worker that died: the reconciler's part for
them (called from jobs/reconciler.py's `reconcile`).

Each job claims its object in the jobs' ledger and beats while its child runs (jobs/work_claims.py). A live object
(queued and claimed, running, sampling or scoring) whose claim went stale, or at the embedded server's start-up any
earlier claim (a dead process's), is failed with the reason in words through its aggregate's own fail command; the
claim is then released. An object that already ended has its stale claim released and is left as it is. Two
reconcilers racing on one object are harmless: the domain refuses to fail an object that already ended.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from domain.application import Verity
from domain.errors import NotFound
from domain.lifecycle import Lifecycle
from jobs import retrying
from jobs.context import RECONCILER, JobContext
from jobs.counters import RECONCILER_ACTIONS
from jobs.dispatch_routes import EVALUATION, PROBE, RESCORING
from jobs.ledger import Lease

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkKind:
    """How the reconciler reads and fails one kind of work."""

    noun: str  # as the message names it: "probe"
    get: Callable[[Verity, UUID], Lifecycle]
    fail: Callable[[Verity, UUID, str], object]


KINDS = {
    EVALUATION: WorkKind(
        "evaluation",
        lambda verity, work_id: verity.get_evaluation(None, work_id),
        lambda verity, work_id, message: verity.record_evaluation_failed(work_id, message, RECONCILER),
    ),
    PROBE: WorkKind(
        "probe",
        lambda verity, work_id: verity.get_probe(None, work_id),
        lambda verity, work_id, message: verity.record_probe_failed(work_id, message, RECONCILER),
    ),
    RESCORING: WorkKind(
        "re-scoring",
        lambda verity, work_id: verity.get_rescoring(None, work_id),
        lambda verity, work_id, message: verity.record_rescoring_failed(work_id, message, RECONCILER),
    ),
}


def orphan_work_message(lease: Lease, noun: str) -> str:
    """"The worker running this probe (gpu-7, process 42) stopped sending heartbeats at 12:03:04 UTC: ..."."""
    if lease.beat_at is None:
        who, since = f"The worker running this {noun}", "stopped sending heartbeats"
    else:
        who = f"The worker running this {noun} ({lease.host}, process {lease.pid})"
        since = f"stopped sending heartbeats at {datetime.fromtimestamp(lease.beat_at, UTC).strftime('%H:%M:%S UTC')}"
    return f"{who} {since}: it stopped or lost its connection, so the reconciler ended the {noun}. Start it again."


def reconcile_work(ctx: JobContext, now: float, *, startup_of_embedded: bool = False) -> list[UUID]:
    """One pass over the work claims; returns the evaluations, probes and re-scorings it failed."""
    ended = []
    for lease in ctx.ledger.work_leases():
        kind = KINDS.get(lease.kind)
        if kind is None:
            continue  # a kind a newer version of the jobs claims: that version's reconciler ends it
        dead = lease.is_stale(now, ctx.config.stale_after_seconds) or (startup_of_embedded and bool(lease.worker_id))
        if not dead:
            continue  # a live worker is on it, or finishing: it lets go itself
        if _fail_orphan(ctx, kind, lease):
            ended.append(lease.run_id)
        ctx.ledger.release(lease.run_id)
    return ended


def _fail_orphan(ctx: JobContext, kind: WorkKind, lease: Lease) -> bool:
    work_id, verity = lease.run_id, ctx.verity
    try:
        live = kind.get(verity, work_id).is_live
    except NotFound:
        return False
    if not live:
        return False  # it ended before its worker stopped beating: nothing to say
    message = orphan_work_message(lease, kind.noun)
    if not retrying.record(lambda: kind.fail(verity, work_id, message), f"{kind.noun} {work_id}"):
        return False  # it ended meanwhile (its worker's last line, a cancel)
    RECONCILER_ACTIONS.labels(f"failed_{lease.kind}").inc()
    log.warning("%s %s: its worker stopped beating; the reconciler ended it", kind.noun, work_id)
    return True
