"""Who is asking. Until sign-in exists, every request acts as the owner of the Default organization.

This is the one place that decides it: a later issue replaces `provide_identity` with the signed-in member.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from uuid import UUID

from app.shell.dependencies import ReadModelsDep
from domain.actors import Actor
from domain.errors import NotFound

DEFAULT_ORGANIZATION = "Default"
OWNER = Actor("person", "owner@localhost", "owner@localhost")


@dataclass(frozen=True)
class Identity:
    actor: Actor
    organization_id: UUID
    role: Literal["owner", "member", "viewer"]


def provide_identity(read_models: ReadModelsDep) -> Identity:
    organizations = read_models.organizations()
    if not organizations:
        raise NotFound("There is no organization yet. Start the console with `verity serve` to create one.")
    chosen = next((org for org in organizations if org.name == DEFAULT_ORGANIZATION), organizations[0])
    return Identity(actor=OWNER, organization_id=chosen.id, role="owner")
