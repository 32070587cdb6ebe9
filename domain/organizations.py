"""Organizations (the tenant every aggregate belongs to) and their projects (a model that runs train)."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

PLANS = ("free", "pro")
ROLES = ("owner", "member", "viewer")
VERITY_NAMESPACE = uuid5(NAMESPACE_URL, "https://verity.local/")


class Organization(Aggregate):
    """One per name (a lookup aggregate: its id is the uuid5 of the name)."""

    @staticmethod
    def create_id(name: str, **_: Any) -> UUID:
        return uuid5(VERITY_NAMESPACE, f"organization:{name.strip().casefold()}")

    @event("Created")
    def __init__(self, name: str, plan: str, actor: dict[str, str]) -> None:
        self.name = name
        self.plan = plan
        self.members: dict[str, dict[str, str]] = {}  # account id → {"email", "role"}

    @property
    def org_id(self) -> UUID:
        return self.id

    @property
    def has_rl(self) -> bool:
        return self.plan == "pro"

    def change_plan(self, plan: str, actor: dict[str, str]) -> None:
        if plan != self.plan:
            self._plan_changed(plan=plan, actor=actor)

    @event("PlanChanged")
    def _plan_changed(self, plan: str, actor: dict[str, str]) -> None:
        self.plan = plan

    # --- members (checked by the application's commands before these record) -----------------------------
    def role_of(self, account_id: UUID) -> str | None:
        member = self.members.get(str(account_id))
        return member["role"] if member else None

    def owners(self) -> list[str]:
        return [account for account, member in self.members.items() if member["role"] == "owner"]

    @event("MemberAdded")
    def add_member(self, account_id: str, email: str, role: str, actor: dict[str, str]) -> None:
        self.members[account_id] = {"email": email, "role": role}

    @event("RoleChanged")
    def change_role(self, account_id: str, role: str, actor: dict[str, str]) -> None:
        self.members[account_id]["role"] = role

    @event("MemberRemoved")
    def remove_member(self, account_id: str, actor: dict[str, str]) -> None:
        self.members.pop(account_id, None)


class Project(Aggregate):
    """One per organization and name. `model` is a hub id or a local path; `vision` marks a vision model."""

    @staticmethod
    def create_id(org_id: UUID, name: str, **_: Any) -> UUID:
        return uuid5(org_id, f"project:{name.strip().casefold()}")

    @event("Created")
    def __init__(
        self, org_id: UUID, name: str, model: str, revision: str | None, vision: bool, actor: dict[str, str]
    ) -> None:
        self.org_id = org_id
        self.name = name
        self.model = model
        self.revision = revision
        self.vision = vision
        # The Configure form's starting values for this project's runs: a partial `training` body
        # ({"rl": {...}, "advanced": {...}}). A tiny model needs other numbers than the product's defaults.
        self.run_defaults: dict[str, Any] = {}

    def set_run_defaults(self, defaults: dict[str, Any], actor: dict[str, str]) -> None:
        """Checked by the application against the run settings' bounds before it is called."""
        if defaults != self.run_defaults:
            self._run_defaults_set(defaults=defaults, actor=actor)

    @event("RunDefaultsSet")
    def _run_defaults_set(self, defaults: dict[str, Any], actor: dict[str, str]) -> None:
        self.run_defaults = defaults
