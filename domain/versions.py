"""What a dataset and a custom metric share: a named aggregate that numbers the versions added to it
(`NumberedVersions`), and versions that are archived once (`Archivable`).

Mixins of the aggregates in domain/datasets/ and domain/custom_metrics.py. A method here checks or computes, then
calls the aggregate's own `@event` method, which only assigns: the events stay declared on each aggregate
(`Dataset.VersionAdded`, `CustomMetricVersion.Archived`, ...), so their names in the store do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from domain.errors import IllegalTransition


class NumberedVersions:
    # provided by the aggregate: the ids of its versions, and the @event method that records one more
    versions: list[UUID]
    _version_added: Callable[..., None]

    @property
    def next_number(self) -> int:
        return len(self.versions) + 1

    def add_version(self, version_id: UUID, actor: dict[str, str]) -> None:
        self._version_added(version_id=version_id, number=self.next_number, actor=dict(actor))


class Archivable:
    # provided by the aggregate: whether it is archived, the @event method, and how a person names it
    archived: bool
    _archived: Callable[..., None]

    @property
    def label(self) -> str:
        raise NotImplementedError

    def archive(self, actor: dict[str, str]) -> None:
        if self.archived:
            raise IllegalTransition(f"{self.label} is already archived.")
        self._archived(actor=dict(actor))
