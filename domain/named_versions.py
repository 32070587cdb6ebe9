"""The aggregate base of a dataset and a custom metric: an organization's named thing that numbers its versions.

One per organization and name (a lookup aggregate: its id is the uuid5 of both), so a name is taken once. The
created event is declared here and stored under each aggregate's own name (`Dataset.Created`,
`CustomMetric.Created`), as eventsourcing names a created event after the class created. A later event is stored
under the name of the class that declares it, so each aggregate declares its own "VersionAdded" with
`version_added_event()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.versions import NumberedVersions


class NamedVersionsAggregate(NumberedVersions, Aggregate):
    # What the id is of, "dataset" or "custom-metric", set by each aggregate: it tells two kinds' names apart.
    # Not a class annotation: eventsourcing would make an annotated aggregate class, and every class below it,
    # a dataclass, whose generated __init__ would take the place of the created event's.
    id_kind = ""

    @classmethod
    def create_id(cls, org_id: UUID, name: str, **_: Any) -> UUID:
        return uuid5(org_id, f"{cls.id_kind}:{name.strip().casefold()}")

    @event("Created")
    def __init__(self, org_id: UUID, name: str, actor: dict[str, str]) -> None:
        self.org_id = org_id
        self.name = name
        self.versions: list[UUID] = []


def version_added_event() -> Callable[..., None]:
    """The `@event` method `_version_added(version_id, number, actor)` that records "VersionAdded"."""

    @event("VersionAdded")
    def version_added(self: Any, version_id: UUID, number: int, actor: dict[str, str]) -> None:
        self.versions.append(version_id)

    return version_added
