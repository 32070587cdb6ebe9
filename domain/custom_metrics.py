"""A registered version of an organization's custom metric: the code a run's reward `custom.<version id>` runs.

The smallest piece the jobs need to build a run spec with "the version you saved" (000): editing a metric makes
a new version and leaves a saved run alone, so a version never changes once registered. The console's metric
pages (upload, archive, the list in Reward metric) come with their own issue and build on this aggregate.
"""

from __future__ import annotations

from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.named_versions import NamedVersionsAggregate, version_added_event
from domain.rewards.custom import check_metric_source
from domain.versions import Archivable


class CustomMetricVersion(Archivable, Aggregate):
    """An archived version is refused for a new run; a run already saved with it keeps it (000)."""

    @event("Registered")
    def __init__(self, org_id: UUID, name: str, number: int, source: str, actor: dict[str, str]) -> None:
        self.org_id = org_id
        self.name = name
        self.number = number  # "v3"; not `version`, which is the aggregate's own event count
        self.source = source
        self.archived = False

    @classmethod
    def register(cls, org_id: UUID, name: str, number: int, source: str, actor: dict[str, str]) -> CustomMetricVersion:
        """Checks that the code compiles and defines score(answer, reference); raises MetricSourceInvalid."""
        check_metric_source(source)
        return cls(org_id=org_id, name=name.strip(), number=number, source=source, actor=actor)

    @property
    def label(self) -> str:
        """How a person names it: "exact_year (v3)"."""
        return f"{self.name} (v{self.number})"

    @event("Archived")
    def _archived(self, actor: dict[str, str]) -> None:
        self.archived = True


class CustomMetric(NamedVersionsAggregate):
    """An organization's metric by name, which numbers its versions; one per organization and name."""

    id_kind = "custom-metric"
    _version_added = version_added_event()
