"""The Verity application's organization and project commands (a mixin of `domain.application.Verity`).

It uses the application's `_save`, `get_organization` and `get_project`, and the accounts of `AccessCommands`
(an organization's first owner may be a new account, saved with it).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.errors import DomainError, SettingsInvalid
from domain.organizations import PLANS, Organization, Project
from domain.runs.settings import run_body_from_api
from domain.verity_parts import VerityParts
from domain.written import Written


@dataclass(frozen=True)
class NewOrganization:
    """An organization created with its first owner; `password` is set only when their account was created
    with it (show it once)."""

    org_id: UUID
    owner_id: UUID
    owner_email: str
    password: str | None
    position: int


def _check_plan(plan: str) -> None:
    if plan not in PLANS:
        raise SettingsInvalid({"plan": "The plan must be free or pro."})


class OrganizationCommands(VerityParts):
    # provided by Verity, beside VerityParts
    find_account: Any
    _new_account: Any

    def create_organization(self, name: str, plan: str, actor: Actor) -> Written:
        organization = self._new_organization(name, plan, actor)
        return Written(organization.id, self._save(organization))

    def create_organization_with_owner(self, name: str, plan: str, owner_email: str, actor: Actor) -> NewOrganization:
        """An organization and its first owner, recorded together or not at all. An owner with no account gets
        one with a random password (`password` of the answer: show it once); an existing account keeps its own."""
        organization = self._new_organization(name, plan, actor)
        account = self.find_account(owner_email)
        password = None
        if account is None:
            password = secrets.token_urlsafe(16)
            account = self._new_account(owner_email, password, actor)
        organization.add_member(str(account.id), account.email, "owner", actor.to_dict())
        saved = (organization,) if password is None else (account, organization)
        return NewOrganization(organization.id, account.id, account.email, password, self._save(*saved))

    def _new_organization(self, name: str, plan: str, actor: Actor) -> Organization:
        name = name.strip()
        if not name:
            raise SettingsInvalid({"name": "Name the organization."})
        _check_plan(plan)
        if Organization.create_id(name) in self.repository:
            raise DomainError(f"An organization named {name} already exists.")
        return Organization(name=name, plan=plan, actor=actor.to_dict())

    def set_plan(self, org_id: UUID, plan: str, actor: Actor) -> Written:
        _check_plan(plan)
        organization = self.get_organization(org_id)
        organization.change_plan(plan, actor.to_dict())
        return Written(org_id, self._save(organization))

    def create_project(
        self, org_id: UUID, name: str, model: str, revision: str | None, vision: bool, actor: Actor
    ) -> Written:
        self.get_organization(org_id)
        errors = {}
        if not name.strip():
            errors["name"] = "Name the project."
        if not model.strip():
            errors["model"] = (
                "Choose the project's model: a hub id such as Qwen/Qwen2.5-0.5B-Instruct, or a folder."
            )
        if errors:
            raise SettingsInvalid(errors)
        if Project.create_id(org_id, name) in self.repository:
            raise DomainError(f"A project named {name.strip()} already exists.")
        project = Project(
            org_id=org_id,
            name=name.strip(),
            model=model.strip(),
            revision=(revision or "").strip() or None,
            vision=vision,
            actor=actor.to_dict(),
        )
        return Written(project.id, self._save(project))

    def set_project_run_defaults(
        self, org_id: UUID, project_id: UUID, defaults: dict[str, Any], actor: Actor
    ) -> Written:
        """The starting values of the project's Configure form; refused unless every value is a valid setting."""
        project = self.get_project(org_id, project_id)
        run_body_from_api({"training": defaults})  # raises SettingsInvalid with the form's words
        project.set_run_defaults(defaults, actor.to_dict())
        return Written(project.id, self._save(project))
