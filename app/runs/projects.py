"""A run's project: named in the API body (by id or name), else the organization's only or first."""

from __future__ import annotations

from uuid import UUID

from domain.errors import SettingsInvalid
from projections.store import ReadModels


def choose_project(read_models: ReadModels, org_id: UUID, named: object | None) -> UUID:
    projects = read_models.projects(org_id)
    if named is None or named == "":
        if not projects:
            raise SettingsInvalid({"project": "This organization has no project yet: create one first."})
        return projects[0].id
    text = str(named).strip()
    for project in projects:
        if str(project.id) == text or project.name.casefold() == text.casefold():
            return project.id
    raise SettingsInvalid({"project": f"There is no project {text!r} in this organization."})
