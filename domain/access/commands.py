"""The Verity application's commands for accounts, members, API tokens, storage and providers.

A mixin of `domain.application.Verity` (it uses the application's `_get`, `_save` and `get_organization`).
Every command that changes who may do what is an owner's; the web layer passes the caller's role.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID, uuid4

from eventsourcing.application import AggregateNotFoundError

from domain.access.accounts import MIN_PASSWORD, Account, hash_password, normal_email
from domain.access.connections import (
    LOCAL,
    LOCAL_PROVIDER,
    STORAGE_KINDS,
    Provider,
    StorageSettings,
    TrainingProviders,
)
from domain.access.roles import MANAGE, OWNERS_ONLY, may
from domain.access.tokens import ApiToken, new_token_text, sha256_of, token_id_of
from domain.actors import Actor
from domain.errors import DomainError, NotAllowed, NotFound, SettingsInvalid
from domain.organizations import ROLES, Organization
from domain.verity_parts import VerityParts
from domain.written import Written

LAST_OWNER = "An organization needs at least one owner: make someone else an owner first."
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
PROVIDER_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
ConnectionT = TypeVar("ConnectionT", StorageSettings, TrainingProviders)


@dataclass(frozen=True)
class IssuedToken:
    """A new token: `text` is shown once and never stored."""

    id: UUID
    text: str
    position: int


@dataclass(frozen=True)
class NewMember:
    """A member added; `password` is set only when the account was created for them (show it once)."""

    account_id: UUID
    password: str | None
    position: int


def _require_owner(role: str) -> None:
    if not may(role, MANAGE):
        raise NotAllowed(OWNERS_ONLY)


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise SettingsInvalid({"role": "The role must be owner, member or viewer."})


class AccessCommands(VerityParts):
    # --- accounts ------------------------------------------------------------------------------------------
    def create_account(self, email: str, password: str, actor: Actor) -> Written:
        account = self._new_account(email, password, actor)
        return Written(account.id, self._save(account))

    def _new_account(self, email: str, password: str, actor: Actor) -> Account:
        """A checked new account, not yet saved (a command that records more beside it saves them together)."""
        email = normal_email(email)
        errors = {}
        if not EMAIL.match(email):
            errors["email"] = "Enter an email address, such as ada@example.com."
        if len(password) < MIN_PASSWORD:
            errors["password"] = f"A password needs at least {MIN_PASSWORD} characters."
        if errors:
            raise SettingsInvalid(errors)
        if Account.create_id(email) in self.repository:
            raise SettingsInvalid({"email": f"An account for {email} already exists."})
        return Account(email=email, password_hash=hash_password(password), actor=actor.to_dict())

    def find_account(self, email: str) -> Account | None:
        try:
            account = self.repository.get(Account.create_id(email))
        except AggregateNotFoundError:
            return None
        return account if isinstance(account, Account) else None

    def get_account(self, account_id: UUID) -> Account | None:
        try:
            account = self.repository.get(account_id)
        except AggregateNotFoundError:
            return None
        return account if isinstance(account, Account) else None

    def check_password(self, email: str, password: str) -> Account | None:
        """The account when the password is right; None for a wrong password or an unknown email alike."""
        account = self.find_account(email)
        if account is None:
            hash_password(password)  # spend the same time, so a wrong email can't be told from a wrong password
            return None
        return account if account.password_matches(password) else None

    def change_password(self, account_id: UUID, password: str, actor: Actor) -> Written:
        if len(password) < MIN_PASSWORD:
            raise SettingsInvalid({"password": f"A password needs at least {MIN_PASSWORD} characters."})
        account = self.get_account(account_id)
        if account is None:
            raise NotFound("There is no such account.")
        account.change_password(hash_password(password), actor.to_dict())
        return Written(account.id, self._save(account))

    def change_own_password(self, account_id: UUID, current: str, new: str, repeated: str, actor: Actor) -> Written:
        """A person's own password: the current one first; every other session of theirs ends with it."""
        account = self.get_account(account_id)
        if account is None:
            raise NotFound("There is no such account.")
        if not account.password_matches(current):
            raise SettingsInvalid({"current_password": "The current password is not right."})
        if len(new) < MIN_PASSWORD:
            raise SettingsInvalid({"new_password": f"A password needs at least {MIN_PASSWORD} characters."})
        if new != repeated:
            raise SettingsInvalid({"repeat_password": "The two new passwords are not the same."})
        if new == current:
            raise SettingsInvalid({"new_password": "The new password is the same as the current one."})
        return self.change_password(account_id, new, actor)

    def end_sessions(self, account_id: UUID, actor: Actor) -> Written:
        """Sign out everywhere: every session of the account ends, this one too."""
        account = self.get_account(account_id)
        if account is None:
            raise NotFound("There is no such account.")
        account.end_sessions(actor.to_dict())
        return Written(account.id, self._save(account))

    # --- members -------------------------------------------------------------------------------------------
    def add_member(self, org_id: UUID, email: str, role: str, actor: Actor, caller_role: str) -> NewMember:
        """Adds a person by email; creates their account with a random password when they have none."""
        _require_owner(caller_role)
        _check_role(role)
        organization: Organization = self.get_organization(org_id)
        password = None
        account = self.find_account(email)
        if account is None:
            password = secrets.token_urlsafe(12)
            self.create_account(email, password, actor)
            account = self.find_account(email)
            assert account is not None  # saved just above
        if organization.role_of(account.id) is not None:
            raise SettingsInvalid({"email": f"{account.email} is already a member."})
        organization.add_member(str(account.id), account.email, role, actor.to_dict())
        return NewMember(account.id, password, self._save(organization))

    def change_role(self, org_id: UUID, account_id: UUID, role: str, actor: Actor, caller_role: str) -> Written:
        _require_owner(caller_role)
        _check_role(role)
        organization: Organization = self.get_organization(org_id)
        current = organization.role_of(account_id)
        if current is None:
            raise NotFound("There is no such member.")
        if current == "owner" and role != "owner" and len(organization.owners()) == 1:
            raise DomainError(LAST_OWNER)
        if current != role:
            organization.change_role(str(account_id), role, actor.to_dict())
        return Written(org_id, self._save(organization))

    def remove_member(self, org_id: UUID, account_id: UUID, actor: Actor, caller_role: str) -> Written:
        _require_owner(caller_role)
        organization: Organization = self.get_organization(org_id)
        current = organization.role_of(account_id)
        if current is None:
            raise NotFound("There is no such member.")
        if current == "owner" and len(organization.owners()) == 1:
            raise DomainError(LAST_OWNER)
        organization.remove_member(str(account_id), actor.to_dict())
        return Written(org_id, self._save(organization))

    def change_plan(self, org_id: UUID, plan: str, actor: Actor, caller_role: str) -> Written:
        """An owner's plan change (Settings → Plan and billing)."""
        _require_owner(caller_role)
        return self.set_plan(org_id, plan, actor)  # type: ignore[attr-defined]

    # --- API tokens ----------------------------------------------------------------------------------------
    def issue_token(self, org_id: UUID, name: str, role: str, actor: Actor, caller_role: str) -> IssuedToken:
        _require_owner(caller_role)
        _check_role(role)
        self.get_organization(org_id)
        name = " ".join(name.split())
        if not name:
            raise SettingsInvalid({"name": "Name the token, such as the script or agent that uses it."})
        token_id = uuid4()
        text = new_token_text(token_id)
        token = ApiToken(
            token_id=token_id, org_id=org_id, name=name, role=role, token_sha256=sha256_of(text), actor=actor.to_dict()
        )
        return IssuedToken(token_id, text, self._save(token))

    def revoke_token(self, org_id: UUID, token_id: UUID, actor: Actor, caller_role: str) -> Written:
        _require_owner(caller_role)
        token: ApiToken = self._get(ApiToken, token_id, org_id, "token")
        token.revoke(actor.to_dict())
        return Written(token_id, self._save(token))

    def token_for(self, text: str) -> ApiToken | None:
        """The live token this text proves, or None (unknown, wrong secret or revoked)."""
        token_id = token_id_of(text)
        if token_id is None:
            return None
        try:
            token = self.repository.get(token_id)
        except AggregateNotFoundError:
            return None
        return token if isinstance(token, ApiToken) and token.proves(text) else None

    # --- storage and providers (owners connect them) -------------------------------------------------------
    def _connection(self, kind: type[ConnectionT], org_id: UUID, what: str) -> ConnectionT | None:
        """The organization's one connection of this kind (its id comes from the organization's), or None when
        the owners have not set it."""
        try:
            return self._get(kind, kind.create_id(org_id), org_id, what)
        except NotFound:
            return None

    def get_storage(self, org_id: UUID) -> StorageSettings | None:
        """The organization's storage, or None for the default local folder."""
        return self._connection(StorageSettings, org_id, "storage")

    def set_storage(
        self,
        org_id: UUID,
        settings: dict[str, Any],
        secret_ciphertext: str | None,
        actor: Actor,
        caller_role: str,
    ) -> Written:
        """`settings`: kind (local|s3), bucket, prefix, endpoint_url, region, key_id. A secret of None keeps
        the one already stored."""
        _require_owner(caller_role)
        self.get_organization(org_id)
        settings = {key: str(value or "").strip() for key, value in settings.items()}
        errors = {}
        if settings.get("kind") not in STORAGE_KINDS:
            errors["kind"] = "Storage is a local folder or an S3 bucket."
        elif settings["kind"] == "s3" and not settings.get("bucket"):
            errors["bucket"] = "Name the S3 bucket."
        if errors:
            raise SettingsInvalid(errors)
        current = self.get_storage(org_id)
        if current is None:
            stored = StorageSettings(
                org_id=org_id, settings=settings, secret_ciphertext=secret_ciphertext or "", actor=actor.to_dict()
            )
        else:
            stored = current
            stored.change(
                settings, current.secret_ciphertext if secret_ciphertext is None else secret_ciphertext, actor.to_dict()
            )
        return Written(stored.id, self._save(stored))

    def providers(self, org_id: UUID) -> list[Provider]:
        """The organization's Training providers; `local` first and always there."""
        found = self._providers(org_id)
        return found.listed() if found else [LOCAL]

    def _providers(self, org_id: UUID) -> TrainingProviders | None:
        return self._connection(TrainingProviders, org_id, "providers")

    def set_provider(
        self, org_id: UUID, name: str, gpu: str, price_per_hour: float, actor: Actor, caller_role: str
    ) -> Written:
        _require_owner(caller_role)
        self.get_organization(org_id)
        name, gpu = name.strip(), " ".join(gpu.split())
        errors = {}
        if not PROVIDER_NAME.match(name):
            errors["name"] = "A provider's name is its queue: 1 to 64 letters, digits, dots, dashes or underscores."
        elif name == LOCAL_PROVIDER:
            errors["name"] = "local is this machine's own worker and always exists."
        if not gpu:
            errors["gpu"] = "Name the provider's GPU, such as H100 80GB."
        if not 0 <= price_per_hour <= 1000:
            errors["price_per_hour"] = "The price per hour must be from 0 to 1,000 dollars."
        if errors:
            raise SettingsInvalid(errors)
        found = self._providers(org_id) or TrainingProviders(org_id=org_id, actor=actor.to_dict())
        found.set_provider(name=name, gpu=gpu, price_per_hour=float(price_per_hour), actor=actor.to_dict())
        return Written(found.id, self._save(found))

    def remove_provider(self, org_id: UUID, name: str, actor: Actor, caller_role: str) -> Written:
        _require_owner(caller_role)
        found = self._providers(org_id)
        if found is None or name not in found.providers:
            raise NotFound("There is no such training provider.")
        found.remove_provider(name=name, actor=actor.to_dict())
        return Written(found.id, self._save(found))
