"""Merge model, as the console and the API ask for it: recorded on the run, then sent to a worker.

The merge itself is a job (jobs/merge.py) that writes the checkpoint to the run's storage and records
ModelMerged or MergeFailed; the web process never loads a model.
"""

from __future__ import annotations

import logging
from uuid import UUID

from app.shell.commands import Merger
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotAllowed
from domain.written import Written

log = logging.getLogger(__name__)

NO_WORKER = "This console has no worker to merge models: start it with its jobs."
NOT_SENT = (
    "The merge could not be sent to a worker: the job queue is out of reach, so nothing was merged. Merge model "
    "tries again."
)


def ask_for_merge(verity: Verity, identity: Identity, run_id: UUID, merger: Merger | None) -> Written:
    """MergeRequested, then the job's message; a message that can't be sent ends the merge in words at once."""
    if merger is None:
        raise NotAllowed(NO_WORKER)
    written = verity.merge_run(identity.organization_id, run_id, identity.actor, identity.role)
    try:
        merger(run_id)
    except Exception:
        log.exception("run %s: the merge job could not be sent", run_id)
        return verity.record_merge_failed(run_id, NOT_SENT, identity.actor)
    return written
