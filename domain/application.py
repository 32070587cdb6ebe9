"""The Verity application: every command of the console, the API and the jobs, recorded as events.

Each context's commands are a mixin beside it; this module composes them and gives them what they share: saving
(`_save`, which answers the notification id of what it saved) and the lookups by id (`_get`, and the
organization, project and run every context checks against).
- Organizations and projects: domain/organization_commands.py; accounts, members, tokens, storage and
  providers: domain/access/commands.py.
- Runs: domain/runs/commands.py (the user's commands and the progress the jobs record); the checks of a draft,
  which loops, experiments and evaluations use too: domain/runs/draft_checks.py.
- Datasets, custom metrics, evaluations, loops and experiments: domain/datasets/commands.py,
  domain/custom_metric_commands.py, domain/evaluations/commands.py, domain/loops/commands.py,
  domain/experiments/commands.py; reward probes: domain/probes/commands.py; re-scorings:
  domain/rescorings/commands.py. `Written` lives in domain/written.py.
- `get_run(org_id, run_id)` reads the aggregate (settings for the jobs' run spec, state for checks).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, ProcessingEvent
from eventsourcing.domain import Aggregate, MutableOrImmutableAggregate
from eventsourcing.persistence import IntegrityError, JSONTranscoder, PersistenceError

from domain.access.commands import AccessCommands
from domain.custom_metric_commands import CustomMetricCommands
from domain.datasets.commands import DatasetCommands
from domain.errors import ConcurrentChange, NotFound
from domain.evaluations.commands import EvaluationCommands
from domain.experiments.commands import ExperimentCommands
from domain.loops.commands import LoopCommands
from domain.organization_commands import OrganizationCommands
from domain.organizations import Organization, Project
from domain.probes.commands import ProbeCommands
from domain.rescorings.commands import RescoringCommands
from domain.runs.commands import RunCommands
from domain.runs.run import Run
from domain.runs.stored_settings import RunSettingsAsBody

A = TypeVar("A", bound=Aggregate)
logger = logging.getLogger(__name__)

# A snapshot every 20 events: a load decodes one small snapshot and at most 19 events, and taking one (a write of
# its own) adds a commit to one save in 20.
RUN_SNAPSHOT_INTERVAL = 20

CONCURRENT = (
    "Someone else changed this at the same time. Reload the page to see their change, then try again."
)


class Verity(
    OrganizationCommands,
    AccessCommands,
    RunCommands,
    DatasetCommands,
    CustomMetricCommands,
    EvaluationCommands,
    LoopCommands,
    ExperimentCommands,
    ProbeCommands,
    RescoringCommands,
    Application,
):
    name = "Verity"
    log_section_size = 1000  # projections read the log in pages of up to 1,000 events
    # A run records an event per round (or step): it loads from its latest snapshot and the events after it, so a
    # command costs the same at round 1,000 as at round 10. Snapshots have their own table (`stored_snapshots`,
    # or `verity_snapshots` on PostgreSQL), created at start where it is missing, like the events' table; they are
    # not in the notification log the projections follow, and the events stay the whole record.
    snapshotting_intervals: ClassVar[dict[type[MutableOrImmutableAggregate[Any]], int]] = {Run: RUN_SNAPSHOT_INTERVAL}

    def _take_snapshots(self, processing_event: ProcessingEvent[UUID]) -> None:
        """A snapshot is a cache of what the events already hold, written after they commit: one that cannot be
        written (the database blinked) must not make a saved command look failed. The next is taken 20 events on."""
        try:
            super()._take_snapshots(processing_event)
        except PersistenceError:
            logger.warning("A snapshot could not be written; the events are saved, and loads replay them instead",
                           exc_info=True)

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        transcoder.register(RunSettingsAsBody())  # a run's settings, stored as the API body

    def _save(self, *aggregates: Aggregate) -> int:
        try:
            recordings = self.save(*aggregates)
        except IntegrityError:
            raise ConcurrentChange(CONCURRENT) from None
        return recordings[-1].notification.id if recordings else self.recorder.max_notification_id() or 0

    def _get(self, cls: type[A], aggregate_id: UUID, org_id: UUID | None, what: str) -> A:
        try:
            aggregate = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            raise NotFound(f"There is no such {what}.") from None
        if not isinstance(aggregate, cls) or (org_id is not None and _org_of(aggregate) != org_id):
            raise NotFound(f"There is no such {what}.")
        return aggregate

    def changed_since(self, versions: Mapping[UUID, int]) -> bool:
        """Whether any of these aggregates has an event after its version here: a caller that keeps what it worked
        out from them (the console's identity of a session) works it out again only then. One small read each,
        where a load reads the aggregate's snapshots and events and replays them."""
        return any(self.recorder.select_events(aggregate_id, gt=version, limit=1)
                   for aggregate_id, version in versions.items())

    def get_organization(self, org_id: UUID) -> Organization:
        return self._get(Organization, org_id, org_id, "organization")

    def get_project(self, org_id: UUID, project_id: UUID) -> Project:
        return self._get(Project, project_id, org_id, "project")

    def get_run(self, org_id: UUID | None, run_id: UUID) -> Run:
        """`org_id` None is for the jobs, which act for whichever organization owns the run."""
        return self._get(Run, run_id, org_id, "run")


def _org_of(aggregate: Aggregate) -> UUID:
    return aggregate.id if isinstance(aggregate, Organization) else aggregate.org_id  # type: ignore[attr-defined]
