"""Who may do what, as the console lists it: an organization's members and its API tokens.

Accounts and tokens are checked against the event store itself at sign-in; these views serve the owner's pages
and the choice of organization after sign-in. Nothing secret is copied here (no hash, no token text).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from projections.base import Event, Projection
from projections.rows import read_row
from projections.tables import Row, Tx


@dataclass(frozen=True)
class MemberRow:
    org_id: UUID
    account_id: UUID
    email: str
    role: str
    added_at: str


@dataclass(frozen=True)
class TokenRow:
    id: UUID
    org_id: UUID
    name: str
    role: str
    issued_by: str
    issued_at: str
    revoked_at: str | None
    revoked_by: str | None


def _member(e: Event) -> Row:
    """The key of the membership an organization's member event is about."""
    return {"org_id": str(e.aggregate_id), "account_id": str(e.data["account_id"])}


class Access(Projection):
    name = "access"

    def __init__(self) -> None:
        self.handlers = {
            "Organization.MemberAdded": self._member_added,
            "Organization.RoleChanged": lambda tx, e: tx.update("memberships", _member(e), {"role": e.data["role"]}),
            # Tx has no delete: a removed member keeps a row with no role, which every read skips.
            "Organization.MemberRemoved": lambda tx, e: tx.update("memberships", _member(e), {"role": ""}),
            "ApiToken.Issued": self._token_issued,
            "ApiToken.Revoked": self._token_revoked,
        }

    def _member_added(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "memberships",
            {**_member(e), "email": e.data["email"], "role": e.data["role"], "added_at": e.time},
        )

    def _token_issued(self, tx: Tx, e: Event) -> None:
        tx.upsert(
            "api_tokens",
            {
                "id": str(e.aggregate_id),
                "org_id": str(e.data["org_id"]),
                "name": e.data["name"],
                "role": e.data["role"],
                "issued_by": e.actor["name"],
                "issued_at": e.time,
                "revoked_at": None,
                "revoked_by": None,
            },
        )

    def _token_revoked(self, tx: Tx, e: Event) -> None:
        tx.update("api_tokens", {"id": str(e.aggregate_id)}, {"revoked_at": e.time, "revoked_by": e.actor["name"]})


class AccessReads:
    """A mixin of `TableReadModels` (it reads `self.tables`)."""

    tables: object

    def members(self, org_id: UUID) -> list[MemberRow]:
        rows = self.tables.select("memberships", {"org_id": str(org_id)}, order=[("email", False)])  # type: ignore[attr-defined]
        return [read_row(MemberRow, r) for r in rows if r["role"]]

    def memberships_of(self, account_id: UUID) -> list[MemberRow]:
        """Every organization a person belongs to, oldest membership first."""
        rows = self.tables.select("memberships", {"account_id": str(account_id)}, order=[("added_at", False)])  # type: ignore[attr-defined]
        return [read_row(MemberRow, r) for r in rows if r["role"]]

    def api_tokens(self, org_id: UUID) -> list[TokenRow]:
        rows = self.tables.select("api_tokens", {"org_id": str(org_id)}, order=[("issued_at", True)])  # type: ignore[attr-defined]
        return [read_row(TokenRow, r) for r in rows]
