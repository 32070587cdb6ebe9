"""Merge model, as the console and the API ask for it: recorded on the run; the jobs send it to a worker.

The merge itself is a job (jobs/merge.py) that writes the checkpoint to the run's storage and records
ModelMerged or MergeFailed; the web process never loads a model. The jobs send it from the event log (and say in
words, with MergeFailed, when the job queue is out of reach): the page waits until they have, so it shows which.
"""

from __future__ import annotations

import logging
from uuid import UUID

from app.shell.identity import Identity
from app.shell.jobs import SENT_TIMEOUT, ConsoleJobs
from domain.application import Verity
from domain.errors import NotAllowed
from domain.written import Written

log = logging.getLogger(__name__)

NO_WORKER = "This console has no worker to merge models: start it with its jobs."


def ask_for_merge(verity: Verity, identity: Identity, run_id: UUID, jobs: ConsoleJobs | None) -> Written:
    """MergeRequested; once the jobs have sent it (or ended it in words, when it could not be sent), the position
    to see, which covers what they recorded."""
    if jobs is None:
        raise NotAllowed(NO_WORKER)
    written = verity.merge_run(identity.organization_id, run_id, identity.actor, identity.role)
    if not jobs.wait_sent(written.position, SENT_TIMEOUT):
        log.warning("run %s: the jobs have not sent the merge yet; they will", run_id)
    return Written(written.id, max(written.position, verity.recorder.max_notification_id() or 0))
