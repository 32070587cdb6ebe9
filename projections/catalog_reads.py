"""What the console reads of the catalog: datasets and their versions, custom metrics and their versions.

A mixin of `TableReadModels` (it reads `self.tables`); rows are frozen dataclasses, as in projections/rows.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any
from uuid import UUID

from domain.datasets.version import SPLITS, DatasetVersionSize
from projections.rows import RowT, read_row
from projections.tables import Row


@dataclass(frozen=True)
class CatalogEntryRow:
    """A dataset or a custom metric: both are a name with numbered versions."""

    id: UUID
    org_id: UUID
    name: str
    versions: int
    latest_version_id: UUID | None
    created_at: str
    updated_at: str


class DatasetRow(CatalogEntryRow):
    """A dataset; its versions are `DatasetVersionRow`s."""


@dataclass(frozen=True)
class DatasetVersionRow(DatasetVersionSize):
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


class CustomMetricRow(CatalogEntryRow):
    """A custom metric; its versions are `CustomMetricVersionRow`s."""


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


def _version(r: Row) -> DatasetVersionRow:
    return read_row(DatasetVersionRow, r, split_counts={split: r[f"{split}_examples"] for split in SPLITS})


_dataset = partial(read_row, DatasetRow)
_metric = partial(read_row, CustomMetricRow)
_metric_version = partial(read_row, CustomMetricVersionRow)


class CatalogReads:
    """Datasets and custom metrics are read alike: by name, one by id, and their versions newest first."""

    tables: Any  # provided by TableReadModels

    def datasets(self, org_id: UUID) -> list[DatasetRow]:
        return self._by_name("datasets", _dataset, org_id)

    def dataset(self, org_id: UUID, dataset_id: UUID) -> DatasetRow | None:
        return self._one("datasets", _dataset, org_id, dataset_id)

    def dataset_versions(self, org_id: UUID, dataset_id: UUID | None = None) -> list[DatasetVersionRow]:
        """Newest first; every version of the organization when no dataset is named."""
        return self._versions("dataset_versions", _version, org_id, ("dataset_id", dataset_id), "dataset_name")

    def dataset_version(self, org_id: UUID, version_id: UUID) -> DatasetVersionRow | None:
        return self._one("dataset_versions", _version, org_id, version_id)

    def custom_metrics(self, org_id: UUID) -> list[CustomMetricRow]:
        return self._by_name("custom_metrics", _metric, org_id)

    def custom_metric(self, org_id: UUID, metric_id: UUID) -> CustomMetricRow | None:
        return self._one("custom_metrics", _metric, org_id, metric_id)

    def custom_metric_versions(self, org_id: UUID, metric_id: UUID | None = None) -> list[CustomMetricVersionRow]:
        """By metric name, newest version first; every metric's when none is named."""
        return self._versions(
            "custom_metric_versions", _metric_version, org_id, ("metric_id", metric_id), "metric_name"
        )

    def custom_metric_version(self, org_id: UUID, version_id: UUID) -> CustomMetricVersionRow | None:
        return self._one("custom_metric_versions", _metric_version, org_id, version_id)

    def _by_name(self, table: str, read: Callable[[Row], RowT], org_id: UUID) -> list[RowT]:
        return [read(r) for r in self.tables.select(table, {"org_id": str(org_id)}, order=[("name", False)])]

    def _one(self, table: str, read: Callable[[Row], RowT], org_id: UUID, row_id: UUID) -> RowT | None:
        """None too for another organization's id."""
        rows = self.tables.select(table, {"id": str(row_id), "org_id": str(org_id)})
        return read(rows[0]) if rows else None

    def _versions(
        self, table: str, read: Callable[[Row], RowT], org_id: UUID, parent: tuple[str, UUID | None], name: str
    ) -> list[RowT]:
        """By the parent's name, newest version first; of one parent when `parent` names its id."""
        where = {"org_id": str(org_id)}
        column, parent_id = parent
        if parent_id is not None:
            where[column] = str(parent_id)
        return [read(r) for r in self.tables.select(table, where, order=[(name, False), ("number", True)])]
