"""What the custom-metrics API takes and answers."""

from __future__ import annotations

from uuid import UUID

import msgspec

from app.runs.schemas import CommandAnswer
from app.shell.structs import from_row
from domain.rewards.config import CUSTOM_PREFIX
from projections.catalog_reads import CustomMetricRow, CustomMetricVersionRow


class CustomMetricIn(msgspec.Struct):
    name: str
    source: str  # Python defining score(answer, reference) -> a number from 0 to 1


class CustomMetricSourceIn(msgspec.Struct):
    source: str


class CustomMetricVersionOut(msgspec.Struct):
    id: UUID
    metric_id: UUID
    name: str
    number: int
    label: str
    reward_metric: str  # what a run's reward names: "custom.<version id>"
    archived: bool
    source: str
    created_at: str
    created_by: str
    command: CommandAnswer | None = None

    @classmethod
    def of(cls, row: CustomMetricVersionRow, command: CommandAnswer | None = None) -> CustomMetricVersionOut:
        return from_row(cls, row, name=row.metric_name, reward_metric=f"{CUSTOM_PREFIX}{row.id}", command=command)


class CustomMetricOut(msgspec.Struct):
    id: UUID
    name: str
    versions: list[CustomMetricVersionOut]  # newest first
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, row: CustomMetricRow, versions: list[CustomMetricVersionRow]) -> CustomMetricOut:
        return from_row(cls, row, versions=[CustomMetricVersionOut.of(version) for version in versions])
