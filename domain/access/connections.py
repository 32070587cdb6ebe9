"""What an owner connects: the organization's storage (local folder or S3) and its Training providers.

The storage secret arrives here already encrypted (the web process holds the key); the domain never sees it in
clear and these aggregates are left out of the event feed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid5

from eventsourcing.domain import Aggregate, event

LOCAL_PROVIDER = "local"
STORAGE_KINDS = ("local", "s3")


@dataclass(frozen=True)
class Provider:
    """A Training provider: workers consuming the queue named `name`, with their GPU and price per hour."""

    name: str
    gpu: str
    price_per_hour: float

    @property
    def queue(self) -> str:
        return self.name


LOCAL = Provider(LOCAL_PROVIDER, "This machine", 0.0)


class StorageSettings(Aggregate):
    """One per organization. `secret_ciphertext` is the S3 secret, Fernet-encrypted by the web process."""

    @staticmethod
    def create_id(org_id: UUID, **_: Any) -> UUID:
        return uuid5(org_id, "storage")

    @event("Set")
    def __init__(self, org_id: UUID, settings: dict[str, Any], secret_ciphertext: str, actor: dict[str, str]) -> None:
        self.org_id = org_id
        self.settings = settings
        self.secret_ciphertext = secret_ciphertext

    def change(self, settings: dict[str, Any], secret_ciphertext: str, actor: dict[str, str]) -> None:
        self._changed(settings=settings, secret_ciphertext=secret_ciphertext, actor=actor)

    @event("Changed")
    def _changed(self, settings: dict[str, Any], secret_ciphertext: str, actor: dict[str, str]) -> None:
        self.settings = settings
        self.secret_ciphertext = secret_ciphertext


class TrainingProviders(Aggregate):
    """One per organization: the providers besides `local`, by name."""

    @staticmethod
    def create_id(org_id: UUID, **_: Any) -> UUID:
        return uuid5(org_id, "providers")

    @event("Started")
    def __init__(self, org_id: UUID, actor: dict[str, str]) -> None:
        self.org_id = org_id
        self.providers: dict[str, dict[str, Any]] = {}

    @event("ProviderSet")
    def set_provider(self, name: str, gpu: str, price_per_hour: float, actor: dict[str, str]) -> None:
        self.providers[name] = {"gpu": gpu, "price_per_hour": price_per_hour}

    @event("ProviderRemoved")
    def remove_provider(self, name: str, actor: dict[str, str]) -> None:
        self.providers.pop(name, None)

    def listed(self) -> list[Provider]:
        return [LOCAL] + [
            Provider(name, p["gpu"], float(p["price_per_hour"])) for name, p in sorted(self.providers.items())
        ]
