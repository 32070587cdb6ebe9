"""The Dataset aggregate: an organization's named dataset, which numbers the versions uploaded to it.

One per organization and name (a lookup aggregate: its id is the uuid5 of both), so a name is taken once.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.versions import NumberedVersions

MAX_NAME = 200


class Dataset(NumberedVersions, Aggregate):
    @staticmethod
    def create_id(org_id: UUID, name: str, **_: Any) -> UUID:
        return uuid5(org_id, f"dataset:{name.strip().casefold()}")

    @event("Created")
    def __init__(self, org_id: UUID, name: str, actor: dict[str, str]) -> None:
        self.org_id = org_id
        self.name = name
        self.versions: list[UUID] = []

    @event("VersionAdded")
    def _version_added(self, version_id: UUID, number: int, actor: dict[str, str]) -> None:
        self.versions.append(version_id)
