"""Accounts: a person who signs in with an email and a password, kept as an argon2 hash (never the password)."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid5

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from eventsourcing.domain import Aggregate, event

from domain.organizations import VERITY_NAMESPACE

HASHER = PasswordHasher()  # argon2id with the library's current recommended parameters
MIN_PASSWORD = 12


def normal_email(email: str) -> str:
    return email.strip().casefold()


def hash_password(password: str) -> str:
    return HASHER.hash(password)


class Account(Aggregate):
    """One per email (a lookup aggregate: its id is the uuid5 of the email)."""

    @staticmethod
    def create_id(email: str, **_: Any) -> UUID:
        return uuid5(VERITY_NAMESPACE, f"account:{normal_email(email)}")

    @event("Registered")
    def __init__(self, email: str, password_hash: str, actor: dict[str, str]) -> None:
        self.email = email
        self.password_hash = password_hash
        # A session cookie carries the generation it was signed in under; a new generation ends every older
        # session (a password change, or Sign out everywhere), since a cookie can't be called back.
        self.session_generation = 0

    def password_matches(self, password: str) -> bool:
        try:
            return HASHER.verify(self.password_hash, password)
        except (VerificationError, InvalidHashError):
            return False

    def change_password(self, password_hash: str, actor: dict[str, str]) -> None:
        self._password_changed(password_hash=password_hash, actor=actor)

    @event("PasswordChanged")
    def _password_changed(self, password_hash: str, actor: dict[str, str]) -> None:
        self.password_hash = password_hash
        self.session_generation += 1

    def end_sessions(self, actor: dict[str, str]) -> None:
        self._sessions_ended(actor=actor)

    @event("SessionsEnded")
    def _sessions_ended(self, actor: dict[str, str]) -> None:
        self.session_generation += 1
