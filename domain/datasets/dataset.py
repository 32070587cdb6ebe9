"""The Dataset aggregate: an organization's named dataset, which numbers the versions uploaded to it.

One per organization and name (a lookup aggregate: its id is the uuid5 of both), so a name is taken once.
"""

from __future__ import annotations

from domain.named_versions import NamedVersionsAggregate, version_added_event

MAX_NAME = 200


class Dataset(NamedVersionsAggregate):
    id_kind = "dataset"
    _version_added = version_added_event()
