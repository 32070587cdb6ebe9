"""What the console reads of the catalog: datasets and their versions, custom metrics and their versions.

A mixin of `TableReadModels` (it reads `self.tables`); rows are frozen dataclasses, as in projections/rows.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.datasets.version import SPLITS
from projections.tables import Row


@dataclass(frozen=True)
class DatasetRow:
    id: UUID
    org_id: UUID
    name: str
    versions: int
    latest_version_id: UUID | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class DatasetVersionRow:
    id: UUID
    org_id: UUID
    dataset_id: UUID
    dataset_name: str
    number: int
    storage_key: str
    split_counts: dict[str, int]  # {"train": 120, "validation": 20, "test": 20}
    shape: str
    has_images: bool
    archived: bool
    created_at: str
    created_by: str

    @property
    def label(self) -> str:
        """ "gsm8k-mini v3"."""
        return f"{self.dataset_name} v{self.number}"

    @property
    def total_examples(self) -> int:
        return sum(self.split_counts.values())


@dataclass(frozen=True)
class CustomMetricRow:
    id: UUID
    org_id: UUID
    name: str
    versions: int
    latest_version_id: UUID | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class CustomMetricVersionRow:
    id: UUID
    org_id: UUID
    metric_id: UUID
    metric_name: str
    number: int
    source: str
    archived: bool
    created_at: str
    created_by: str

    @property
    def label(self) -> str:
        """ "exact_year (v3)"."""
        return f"{self.metric_name} (v{self.number})"


def _uuid(value: str | None) -> UUID | None:
    return UUID(value) if value else None


def _dataset(r: Row) -> DatasetRow:
    return DatasetRow(
        UUID(r["id"]), UUID(r["org_id"]), r["name"], r["versions"], _uuid(r["latest_version_id"]),
        r["created_at"], r["updated_at"],
    )  # fmt: skip


def _version(r: Row) -> DatasetVersionRow:
    return DatasetVersionRow(
        id=UUID(r["id"]),
        org_id=UUID(r["org_id"]),
        dataset_id=UUID(r["dataset_id"]),
        dataset_name=r["dataset_name"],
        number=r["number"],
        storage_key=r["storage_key"],
        split_counts={split: r[f"{split}_examples"] for split in SPLITS},
        shape=r["shape"],
        has_images=bool(r["has_images"]),
        archived=bool(r["archived"]),
        created_at=r["created_at"],
        created_by=r["created_by"],
    )


def _metric(r: Row) -> CustomMetricRow:
    return CustomMetricRow(
        UUID(r["id"]), UUID(r["org_id"]), r["name"], r["versions"], _uuid(r["latest_version_id"]),
        r["created_at"], r["updated_at"],
    )  # fmt: skip


def _metric_version(r: Row) -> CustomMetricVersionRow:
    return CustomMetricVersionRow(
        UUID(r["id"]), UUID(r["org_id"]), UUID(r["metric_id"]), r["metric_name"], r["number"], r["source"],
        bool(r["archived"]), r["created_at"], r["created_by"],
    )  # fmt: skip


class CatalogReads:
    tables: Any  # provided by TableReadModels

    def datasets(self, org_id: UUID) -> list[DatasetRow]:
        rows = self.tables.select("datasets", {"org_id": str(org_id)}, order=[("name", False)])
        return [_dataset(r) for r in rows]

    def dataset(self, org_id: UUID, dataset_id: UUID) -> DatasetRow | None:
        rows = self.tables.select("datasets", {"id": str(dataset_id), "org_id": str(org_id)})
        return _dataset(rows[0]) if rows else None

    def dataset_versions(self, org_id: UUID, dataset_id: UUID | None = None) -> list[DatasetVersionRow]:
        """Newest first; every version of the organization when no dataset is named."""
        where = {"org_id": str(org_id)}
        if dataset_id is not None:
            where["dataset_id"] = str(dataset_id)
        order = [("dataset_name", False), ("number", True)]
        return [_version(r) for r in self.tables.select("dataset_versions", where, order=order)]

    def dataset_version(self, org_id: UUID, version_id: UUID) -> DatasetVersionRow | None:
        rows = self.tables.select("dataset_versions", {"id": str(version_id), "org_id": str(org_id)})
        return _version(rows[0]) if rows else None

    def custom_metrics(self, org_id: UUID) -> list[CustomMetricRow]:
        rows = self.tables.select("custom_metrics", {"org_id": str(org_id)}, order=[("name", False)])
        return [_metric(r) for r in rows]

    def custom_metric(self, org_id: UUID, metric_id: UUID) -> CustomMetricRow | None:
        rows = self.tables.select("custom_metrics", {"id": str(metric_id), "org_id": str(org_id)})
        return _metric(rows[0]) if rows else None

    def custom_metric_versions(self, org_id: UUID, metric_id: UUID | None = None) -> list[CustomMetricVersionRow]:
        """By metric name, newest version first; every metric's when none is named."""
        where = {"org_id": str(org_id)}
        if metric_id is not None:
            where["metric_id"] = str(metric_id)
        order = [("metric_name", False), ("number", True)]
        return [_metric_version(r) for r in self.tables.select("custom_metric_versions", where, order=order)]

    def custom_metric_version(self, org_id: UUID, version_id: UUID) -> CustomMetricVersionRow | None:
        rows = self.tables.select("custom_metric_versions", {"id": str(version_id), "org_id": str(org_id)})
        return _metric_version(rows[0]) if rows else None
