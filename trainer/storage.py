"""Where a run's files go: a local folder or an S3 bucket (boto3; credentials from the environment).

Keys are relative to the storage root: runs/<run id>/rollouts/round-001.jsonl, runs/<run id>/adapter/...
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

from trainer.spec import Storage


class RunStorage(Protocol):
    def put_bytes(self, key: str, data: bytes) -> str:
        """Store `data` under `key`; return the object's location (a path or an s3:// URL)."""
        ...

    def put_file(self, key: str, path: Path) -> str: ...

    def location(self, key: str) -> str: ...

    def get_bytes(self, key: str) -> bytes:
        """The object under `key`; FileNotFoundError where there is none."""
        ...

    def delete(self, key: str) -> None:
        """Remove the object under `key`, if there is one."""
        ...


class LocalStorage:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def location(self, key: str) -> str:
        return str(self.root / key)

    def put_bytes(self, key: str, data: bytes) -> str:
        target = self.root / key
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")
        partial.write_bytes(data)
        partial.replace(target)  # a reader never sees half a file
        return str(target)

    def put_file(self, key: str, path: Path) -> str:
        target = self.root / key
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        return str(target)

    def get_bytes(self, key: str) -> bytes:
        return (self.root / key).read_bytes()

    def delete(self, key: str) -> None:
        (self.root / key).unlink(missing_ok=True)


class S3Storage:
    def __init__(self, url: str, endpoint_url: str | None = None) -> None:
        import boto3

        parsed = urlparse(url)
        self.bucket = parsed.netloc
        self.prefix = parsed.path.strip("/")
        self.client = boto3.client("s3", endpoint_url=endpoint_url)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def location(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._key(key)}"

    def put_bytes(self, key: str, data: bytes) -> str:
        self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)
        return self.location(key)

    def put_file(self, key: str, path: Path) -> str:
        self.client.upload_file(str(path), self.bucket, self._key(key))
        return self.location(key)

    def get_bytes(self, key: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
        except self.client.exceptions.NoSuchKey:
            raise FileNotFoundError(self.location(key)) from None

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(key))  # S3 answers alike when there is none


def open_storage(storage: Storage) -> RunStorage:
    if storage.is_s3:
        return S3Storage(storage.location, storage.endpoint_url)
    return LocalStorage(storage.location)


def fetch_folder(location: str, into: Path, endpoint_url: str | None = None) -> Path:
    """A local copy of a folder given as a local path or an s3:// URL (e.g. a start adapter)."""
    if not location.startswith("s3://"):
        return Path(location)
    import boto3

    parsed = urlparse(location)
    prefix = parsed.path.strip("/") + "/"
    client = boto3.client("s3", endpoint_url=endpoint_url)
    into.mkdir(parents=True, exist_ok=True)
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=parsed.netloc, Prefix=prefix):
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix) :]
            target = into / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(parsed.netloc, item["Key"], str(target))
    return into


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
