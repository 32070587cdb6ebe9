"""The directory: which organization each aggregate belongs to; a run's name and rounds (for the timeline's words).

It comes first in every page (projections/registry.py), so the projections after it may read it.
"""

from __future__ import annotations

from uuid import UUID

from projections.base import Event, Projection
from projections.tables import Row, Tx


def file_in_directory(
    tx: Tx, e: Event, kind: str, name: str, org_id: UUID | None = None, total_rounds: int | None = None
) -> None:
    """Files the event's aggregate under its organization (the event's `org_id` unless given), for the projections
    after the directory and for the feed."""
    org = e.data["org_id"] if org_id is None else org_id
    tx.upsert(
        "directory",
        {
            "aggregate_id": e.aggregate_key,
            "org_id": str(org),
            "kind": kind,
            "name": name,
            "total_rounds": total_rounds,
        },
    )


def directory_entry(tx: Tx, e: Event) -> Row | None:
    """The event's aggregate as the directory filed it (its organization, name and rounds); None for one it never
    filed, whose events the projections after it skip. Read-only: a page's buffer gives its own row, not a copy."""
    return tx.peek("directory", {"aggregate_id": e.aggregate_key})


class Directory(Projection):
    """Which organization each aggregate belongs to; a run's name and rounds (for the timeline's words)."""

    name = "directory"

    def __init__(self) -> None:
        self.handlers = {
            # an organization is filed under itself
            "Organization.Created": lambda tx, e: file_in_directory(
                tx, e, "organization", e.data["name"], org_id=e.aggregate_id
            ),
            "Project.Created": lambda tx, e: file_in_directory(tx, e, "project", e.data["name"]),
            "Run.Saved": lambda tx, e: file_in_directory(
                tx, e, "run", e.data["settings"].name, total_rounds=e.data["settings"].effective_rounds
            ),
            # a probe is filed here, not by the probes' view, so the timeline (before that view) tells its Saved too
            "Probe.Saved": lambda tx, e: file_in_directory(tx, e, "probe", e.data["name"]),
            "Run.Edited": self._run_edited,
            "Run.Continued": self._run_edited,  # more rounds, or a new time limit
        }

    def _run_edited(self, tx: Tx, e: Event) -> None:
        tx.update(
            "directory",
            {"aggregate_id": e.aggregate_key},
            {"name": e.data["settings"].name, "total_rounds": e.data["settings"].effective_rounds},
        )
