"""Where a run's rollouts and adapter go: the organization's own storage when an owner connected one, else the
server's default (VERITY_STORAGE_URL, or the data folder).

An S3 bucket's secret is stored encrypted in the event store; it is opened here, in the worker, and reaches the
trainer only through the child's environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): never the spec file,
never a log line, never the custom-metric sandbox (it starts from an empty environment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from domain.application import Verity
from trainer.spec import Storage
from verity.config import Settings
from verity.secrets import SecretBox, secret_key

UNREADABLE_SECRET = (
    "The organization's storage secret can't be decrypted on this worker. Give the worker the console's "
    "VERITY_SECRET_KEY, or have an owner enter the storage secret again in Settings → Storage, then Retry."
)


class StorageUnreadable(Exception):
    """The organization's storage can't be reached from this worker; the message says what to do."""


@dataclass(frozen=True)
class RunStorage:
    """The storage of one organization's runs, and the environment a child needs to reach it."""

    storage: Storage
    environment: dict[str, str] = field(default_factory=dict, repr=False)  # credentials: never printed

    @property
    def is_s3(self) -> bool:
        return self.storage.is_s3

    def child_environment(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with this storage's credentials; a profile or session token of the worker's own would mix with
        the organization's key, so they go when the organization gives one."""
        if "AWS_ACCESS_KEY_ID" not in self.environment:
            return {**base, **self.environment}
        kept = {k: v for k, v in base.items() if k not in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE")}
        return {**kept, **self.environment}

    def s3_client(self) -> Any:
        """A boto3 client with this storage's credentials (the worker's own chain when it has none)."""
        import boto3

        env = self.environment
        return boto3.client(
            "s3",
            endpoint_url=self.storage.endpoint_url,
            aws_access_key_id=env.get("AWS_ACCESS_KEY_ID"),
            aws_secret_access_key=env.get("AWS_SECRET_ACCESS_KEY"),
            region_name=env.get("AWS_DEFAULT_REGION"),
        )


def server_storage(settings: Settings) -> RunStorage:
    """The server's default: VERITY_STORAGE_URL (with the worker's own credentials), else the data folder."""
    if settings.storage_url:
        return RunStorage(Storage(location=settings.storage_url, endpoint_url=settings.s3_endpoint_url))
    return RunStorage(Storage(location=str(settings.local_storage_dir)))


def run_storage(settings: Settings, verity: Verity, org_id: UUID) -> RunStorage:
    """The organization's storage when an owner set an S3 bucket, else the server's default."""
    stored = verity.get_storage(org_id)
    if stored is None or stored.settings.get("kind") != "s3":
        return server_storage(settings)
    chosen = stored.settings
    prefix = chosen.get("prefix", "").strip("/")
    location = f"s3://{chosen['bucket']}/{prefix}" if prefix else f"s3://{chosen['bucket']}"
    environment: dict[str, str] = {}
    if chosen.get("key_id"):
        environment["AWS_ACCESS_KEY_ID"] = chosen["key_id"]
    if stored.secret_ciphertext:
        try:
            environment["AWS_SECRET_ACCESS_KEY"] = SecretBox(secret_key(settings)).open(stored.secret_ciphertext)
        except ValueError:
            raise StorageUnreadable(UNREADABLE_SECRET) from None
    if chosen.get("region"):
        environment["AWS_DEFAULT_REGION"] = chosen["region"]
    return RunStorage(Storage(location=location, endpoint_url=chosen.get("endpoint_url") or None), environment)
