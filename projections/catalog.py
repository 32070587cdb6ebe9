"""The projections of an organization's catalog: datasets with their versions, custom metrics with theirs.

They follow the same rules as every projection (projections/base.py: written once against `Tx`, named,
positioned in the page's transaction). `CatalogDirectory` files each catalog aggregate under its organization in
the shared directory, so the event feed carries these events too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.custom_metrics import CustomMetric
from domain.datasets.dataset import Dataset
from projections.base import Event, Projection
from projections.directory import file_in_directory
from projections.tables import Tx


class CatalogDirectory(Projection):
    name = "catalog_directory"

    def __init__(self) -> None:
        self.handlers = {
            "Dataset.Created": lambda tx, e: file_in_directory(tx, e, "dataset", e.data["name"]),
            "DatasetVersion.Uploaded": lambda tx, e: file_in_directory(
                tx, e, "dataset_version", f"{e.data['dataset_name']} v{e.data['number']}"
            ),
            "CustomMetric.Created": lambda tx, e: file_in_directory(tx, e, "custom_metric", e.data["name"]),
            "CustomMetricVersion.Registered": lambda tx, e: file_in_directory(
                tx, e, "custom_metric_version", f"{e.data['name']} (v{e.data['number']})"
            ),
        }


class CatalogEntries(Projection):
    """A catalog entry (a dataset or a custom metric) and its numbered versions, which both are projected alike:
    the entry counts its versions and names the latest; each version is a row of its own until archived."""

    def __init__(
        self,
        table: str,
        entry: str,
        versions_table: str,
        version_recorded: str,
        version_columns: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        """`entry` is the entry's aggregate ("Dataset"), whose name starts its events' and its versions';
        `version_recorded` the version's event that carries its row; `version_columns` what is the entry's own in
        a version's row (its parent, number and content)."""
        self.name = table  # each is named after its entries' table
        self.table = table
        self.versions_table = versions_table
        self.version_columns = version_columns
        self.handlers = {
            f"{entry}.Created": self._created,
            f"{entry}.VersionAdded": self._version_added,
            version_recorded: self._version_recorded,
            f"{entry}Version.Archived": lambda tx, e: tx.update(
                versions_table, {"id": str(e.aggregate_id)}, {"archived": 1}
            ),
        }

    def _created(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            self.table,
            {
                "id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "name": e.data["name"],
                "versions": 0,
                "latest_version_id": None,
                "created_at": e.time,
                "updated_at": e.time,
            },
        )

    def _version_added(self, tx: Tx, e: Event) -> None:
        tx.update(
            self.table,
            {"id": str(e.aggregate_id)},
            {"versions": e.data["number"], "latest_version_id": str(e.data["version_id"]), "updated_at": e.time},
        )

    def _version_recorded(self, tx: Tx, e: Event) -> None:
        row = {"id": str(e.aggregate_id), "org_id": str(e.data["org_id"]), **self.version_columns(e.data)}
        tx.upsert(self.versions_table, {**row, "archived": 0, "created_at": e.time, "created_by": e.actor["name"]})


def _dataset_version(data: dict[str, Any]) -> dict[str, Any]:
    counts = data["split_counts"]
    return {
        "dataset_id": str(Dataset.create_id(data["org_id"], data["dataset_name"])),
        "dataset_name": data["dataset_name"],
        "number": data["number"],
        "storage_key": data["storage_key"],
        "train_examples": counts.get("train", 0),
        "validation_examples": counts.get("validation", 0),
        "test_examples": counts.get("test", 0),
        "shape": data["shape"],
        "has_images": int(bool(data["has_images"])),
    }


def _custom_metric_version(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "metric_id": str(CustomMetric.create_id(data["org_id"], data["name"])),
        "metric_name": data["name"],
        "number": data["number"],
        "source": data["source"],
    }


def catalog_projections() -> list[Projection]:
    """The directory part first: the feed, which comes after every projection, reads it."""
    return [
        CatalogDirectory(),
        CatalogEntries("datasets", "Dataset", "dataset_versions", "DatasetVersion.Uploaded", _dataset_version),
        CatalogEntries(
            "custom_metrics",
            "CustomMetric",
            "custom_metric_versions",
            "CustomMetricVersion.Registered",
            _custom_metric_version,
        ),
    ]
