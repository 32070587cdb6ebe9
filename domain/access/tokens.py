"""API tokens: shown once when issued, kept only as a SHA-256, scoped to one organization and a role."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from uuid import UUID

from eventsourcing.domain import Aggregate, event

PREFIX = "vrt_"


def new_token_text(token_id: UUID) -> str:
    """`vrt_<token id>_<secret>`: the id finds the token without a scan; the secret proves it."""
    return f"{PREFIX}{token_id.hex}_{secrets.token_urlsafe(32)}"


def token_id_of(text: str) -> UUID | None:
    if not text.startswith(PREFIX):
        return None
    try:
        return UUID(hex=text[len(PREFIX) :].split("_", 1)[0])
    except ValueError:
        return None


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class ApiToken(Aggregate):
    @staticmethod
    def create_id(token_id: UUID, **_: object) -> UUID:
        """The id is part of the token's text, so it is chosen before the token is recorded."""
        return token_id

    @event("Issued")
    def __init__(
        self, token_id: UUID, org_id: UUID, name: str, role: str, token_sha256: str, actor: dict[str, str]
    ) -> None:
        self.org_id = org_id
        self.name = name
        self.role = role
        self.token_sha256 = token_sha256
        self.revoked = False

    def proves(self, text: str) -> bool:
        return not self.revoked and hmac.compare_digest(self.token_sha256, sha256_of(text))

    def revoke(self, actor: dict[str, str]) -> None:
        if not self.revoked:
            self._revoked(actor=actor)

    @event("Revoked")
    def _revoked(self, actor: dict[str, str]) -> None:
        self.revoked = True
