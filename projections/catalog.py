"""The projections of an organization's catalog: datasets with their versions, custom metrics with theirs.

They follow the same rules as every projection (projections/base.py: written once against `Tx`, named,
positioned in the page's transaction). `CatalogDirectory` files each catalog aggregate under its organization in
the shared directory, so the event feed carries these events too.
"""

from __future__ import annotations

from typing import Any

from domain.custom_metrics import CustomMetric
from domain.datasets.dataset import Dataset
from projections.base import Event, Projection
from projections.tables import Tx


class CatalogDirectory(Projection):
    name = "catalog_directory"

    def __init__(self) -> None:
        self.handlers = {
            "Dataset.Created": lambda tx, e: self._file(tx, e, "dataset", e.data["name"]),
            "DatasetVersion.Uploaded": lambda tx, e: self._file(
                tx, e, "dataset_version", f"{e.data['dataset_name']} v{e.data['number']}"
            ),
            "CustomMetric.Created": lambda tx, e: self._file(tx, e, "custom_metric", e.data["name"]),
            "CustomMetricVersion.Registered": lambda tx, e: self._file(
                tx, e, "custom_metric_version", f"{e.data['name']} (v{e.data['number']})"
            ),
        }

    @staticmethod
    def _file(tx: Tx, e: Event, kind: str, name: str) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "kind": kind,
                "name": name,
                "total_rounds": None,
            },
        )


class Datasets(Projection):
    name = "datasets"

    def __init__(self) -> None:
        self.handlers = {
            "Dataset.Created": self._created,
            "Dataset.VersionAdded": self._version_added,
            "DatasetVersion.Uploaded": self._uploaded,
            "DatasetVersion.Archived": lambda tx, e: tx.update(
                "dataset_versions", {"id": str(e.aggregate_id)}, {"archived": 1}
            ),
        }

    def _created(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "datasets",
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
            "datasets",
            {"id": str(e.aggregate_id)},
            {"versions": e.data["number"], "latest_version_id": str(e.data["version_id"]), "updated_at": e.time},
        )

    def _uploaded(self, tx: Tx, e: Event) -> None:
        data = e.data
        counts = data["split_counts"]
        tx.upsert(
            "dataset_versions",
            {
                "id": str(e.aggregate_id),
                "org_id": str(data["org_id"]),
                "dataset_id": str(Dataset.create_id(data["org_id"], data["dataset_name"])),
                "dataset_name": data["dataset_name"],
                "number": data["number"],
                "storage_key": data["storage_key"],
                "train_examples": counts.get("train", 0),
                "validation_examples": counts.get("validation", 0),
                "test_examples": counts.get("test", 0),
                "shape": data["shape"],
                "has_images": int(bool(data["has_images"])),
                "archived": 0,
                "created_at": e.time,
                "created_by": e.actor["name"],
            },
        )


class CustomMetrics(Projection):
    name = "custom_metrics"

    def __init__(self) -> None:
        self.handlers = {
            "CustomMetric.Created": self._created,
            "CustomMetric.VersionAdded": self._version_added,
            "CustomMetricVersion.Registered": self._registered,
            "CustomMetricVersion.Archived": lambda tx, e: tx.update(
                "custom_metric_versions", {"id": str(e.aggregate_id)}, {"archived": 1}
            ),
        }

    def _created(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "custom_metrics",
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
            "custom_metrics",
            {"id": str(e.aggregate_id)},
            {"versions": e.data["number"], "latest_version_id": str(e.data["version_id"]), "updated_at": e.time},
        )

    def _registered(self, tx: Tx, e: Event) -> None:
        data: dict[str, Any] = e.data
        tx.upsert(
            "custom_metric_versions",
            {
                "id": str(e.aggregate_id),
                "org_id": str(data["org_id"]),
                "metric_id": str(CustomMetric.create_id(data["org_id"], data["name"])),
                "metric_name": data["name"],
                "number": data["number"],
                "source": data["source"],
                "archived": 0,
                "created_at": e.time,
                "created_by": e.actor["name"],
            },
        )


def catalog_projections() -> list[Projection]:
    """The directory part first: the feed, which comes after every projection, reads it."""
    return [CatalogDirectory(), Datasets(), CustomMetrics()]
