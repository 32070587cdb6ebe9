"""The directory: which organization each aggregate belongs to; a run's name and rounds (for the timeline's words).

It comes first in every page (projections/registry.py), so the projections after it may read it.
"""

from __future__ import annotations

from projections.base import Event, Projection
from projections.tables import Tx


class Directory(Projection):
    """Which organization each aggregate belongs to; a run's name and rounds (for the timeline's words)."""

    name = "directory"

    def __init__(self) -> None:
        self.handlers = {
            "Organization.Created": self._organization,
            "Project.Created": self._project,
            "Run.Saved": self._run,
            "Run.Edited": self._run_edited,
        }

    def _organization(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.aggregate_id),
                "kind": "organization",
                "name": e.data["name"],
                "total_rounds": None,
            },
        )

    def _project(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "kind": "project",
                "name": e.data["name"],
                "total_rounds": None,
            },
        )

    def _run(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "directory",
            {
                "aggregate_id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "kind": "run",
                "name": e.data["settings"].name,
                "total_rounds": e.data["settings"].effective_rounds,
            },
        )

    def _run_edited(self, tx: Tx, e: Event) -> None:
        tx.update(
            "directory",
            {"aggregate_id": str(e.aggregate_id)},
            {"name": e.data["settings"].name, "total_rounds": e.data["settings"].effective_rounds},
        )
