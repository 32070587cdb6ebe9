"""Organizations (their plan) and their projects (model, revision, run defaults)."""

from __future__ import annotations

import json

from projections.base import Event, Projection
from projections.tables import Tx


class OrganizationsAndProjects(Projection):
    name = "organizations"

    def __init__(self) -> None:
        self.handlers = {
            "Organization.Created": self._created,
            "Organization.PlanChanged": self._plan,
            "Project.Created": self._project,
            "Project.RunDefaultsSet": self._project_run_defaults,
        }

    def _created(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "organizations",
            {"id": str(e.aggregate_id), "name": e.data["name"], "plan": e.data["plan"], "created_at": e.time},
        )

    def _plan(self, tx: Tx, e: Event) -> None:
        tx.update("organizations", {"id": str(e.aggregate_id)}, {"plan": e.data["plan"]})

    def _project(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "projects",
            {
                "id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "name": e.data["name"],
                "model": e.data["model"],
                "revision": e.data["revision"],
                "vision": int(bool(e.data["vision"])),
                "created_at": e.time,
                "run_defaults": None,
            },
        )

    def _project_run_defaults(self, tx: Tx, e: Event) -> None:
        tx.update("projects", {"id": str(e.aggregate_id)}, {"run_defaults": json.dumps(e.data["defaults"])})

