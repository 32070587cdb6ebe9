"""Evaluations, reward probes and re-scorings claim their object in the jobs' ledger as a run does (jobs/ledger.py):
the claim before the first state change, a heartbeat while the child runs (the supervisor's `beat`), the release
once the ending is recorded. A worker that dies leaves a claim that goes stale, and the reconciler ends the object
in words (jobs/orphan_work.py).

The release is left out on purpose when the job raised: the claim then goes stale, and the reconciler says what
happened rather than the object staying live forever.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

from domain.errors import NotFound
from jobs.context import JobContext

log = logging.getLogger(__name__)
Work = TypeVar("Work")


@dataclass(frozen=True)
class Claim:
    """This worker's hold on one evaluation, probe or re-scoring."""

    ctx: JobContext
    work_id: UUID

    def beat(self) -> bool:
        """Renews the claim; False once it is gone (the reconciler ended the work without us)."""
        return self.ctx.ledger.beat(self.work_id, self.ctx.worker_id)

    def release(self) -> None:
        self.ctx.ledger.release(self.work_id, self.ctx.worker_id)


def claim(ctx: JobContext, work_id: UUID, kind: str) -> Claim | None:
    """Take the work for this worker; None when another live worker holds it (a message delivered twice)."""
    config = ctx.config
    if not ctx.ledger.claim(work_id, kind, ctx.worker_id, os.getpid(), config.stale_after_seconds, kind=kind):
        log.info("the %s %s is held by another worker", kind, work_id)
        return None
    return Claim(ctx, work_id)


def work_on_claimed(ctx: JobContext, work_id: UUID, kind: str, load: Callable[[UUID], Work],
                    work: Callable[[JobContext, Work, Claim], Any]) -> None:
    """`work` on the object if it is still Queued (a message delivered twice finds it started, and does nothing) and
    this worker could claim it; the claim is released once the work returns."""
    try:
        found = load(work_id)
    except NotFound:
        return
    if getattr(found, "state", None) != "queued":
        return
    held = claim(ctx, work_id, kind)  # the reconciler ends the work in words if this worker dies
    if held is None:
        return
    work(ctx, found, held)
    held.release()  # not reached when it raised: the claim goes stale
