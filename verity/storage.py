"""Where uploaded files live: a local folder (the default, under the data folder) or an S3 bucket via boto3.

Keys are relative paths, the same in both: `datasets/<version id>/train.jsonl`. A file is written in two steps:
`stage(key)` gives a writer that takes chunks as they come (memory stays flat), and `commit()` makes the file
appear whole, or `discard()` leaves nothing behind. The app imports this to store uploads; the jobs to read them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol
from urllib.parse import urlparse

from verity.config import Settings

CHUNK_BYTES = 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024  # a line longer than this is refused by the parser: read no more of it


class StorageUnreachable(OSError):
    """S3 refused a write or could not be reached; callers treat it as they treat a local disk's OSError."""


class StagedFile(Protocol):
    def write(self, data: bytes) -> None: ...
    def commit(self) -> None: ...
    def discard(self) -> None: ...


class FileStorage(Protocol):
    def stage(self, key: str) -> StagedFile: ...
    def read_lines(self, key: str) -> Iterator[bytes]: ...
    def exists(self, key: str) -> bool: ...
    def delete(self, key: str) -> None: ...
    def keys(self, prefix: str = "") -> list[str]: ...


def bounded_lines(handle: IO[bytes]) -> Iterator[bytes]:
    """A binary file's lines, each read with a bound, so one huge line never lands in memory whole."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        yield line


class _LocalStaged:
    def __init__(self, target: Path) -> None:
        self.target = target
        target.parent.mkdir(parents=True, exist_ok=True)
        self.partial = target.with_name(target.name + ".partial")
        self.handle = self.partial.open("wb")

    def write(self, data: bytes) -> None:
        self.handle.write(data)

    def commit(self) -> None:
        self.handle.close()
        self.partial.replace(self.target)  # a reader never sees half a file

    def discard(self) -> None:
        self.handle.close()
        self.partial.unlink(missing_ok=True)
        _remove_empty_parents(self.target.parent)


def _remove_empty_parents(folder: Path, stop_at: int = 2) -> None:
    for _ in range(stop_at):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


class LocalStorage:
    """Files under a folder (settings.local_storage_dir by default)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError(f"The storage key {key!r} leaves the storage folder.")
        return path

    def stage(self, key: str) -> StagedFile:
        return _LocalStaged(self.path(key))

    def read_lines(self, key: str) -> Iterator[bytes]:
        with self.path(key).open("rb") as handle:
            yield from bounded_lines(handle)

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def delete(self, key: str) -> None:
        path = self.path(key)
        path.unlink(missing_ok=True)
        _remove_empty_parents(path.parent)

    def keys(self, prefix: str = "") -> list[str]:
        if not self.root.exists():
            return []
        found = (p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file())
        return sorted(key for key in found if key.startswith(prefix))


class _S3Staged:
    """Chunks go to a local temporary file (memory stays flat); commit uploads it in parts with boto3."""

    def __init__(self, storage: S3Storage, key: str) -> None:
        self.storage = storage
        self.key = key
        self.buffer = tempfile.TemporaryFile()  # noqa: SIM115 (closed by commit or discard)

    def write(self, data: bytes) -> None:
        self.buffer.write(data)

    def commit(self) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        self.buffer.seek(0)
        try:
            self.storage.client.upload_fileobj(self.buffer, self.storage.bucket, self.storage.object_key(self.key))
        except (BotoCoreError, ClientError) as error:  # S3 out of reach or refusing: an OSError, as a full disk is
            raise StorageUnreachable(f"S3 refused or could not be reached: {error}") from error
        finally:
            self.buffer.close()

    def discard(self) -> None:
        self.buffer.close()


class S3Storage:
    """Files in `s3://bucket/prefix`; credentials come from boto3's usual chain (the environment)."""

    def __init__(self, url: str, endpoint_url: str | None = None, client: Any = None) -> None:
        parsed = urlparse(url)
        self.bucket = parsed.netloc
        self.prefix = parsed.path.strip("/")
        if client is None:
            import boto3

            client = boto3.client("s3", endpoint_url=endpoint_url)
        self.client = client

    def object_key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def stage(self, key: str) -> StagedFile:
        return _S3Staged(self, key)

    def read_lines(self, key: str) -> Iterator[bytes]:
        body = self.client.get_object(Bucket=self.bucket, Key=self.object_key(key))["Body"]
        with tempfile.TemporaryFile() as local:  # a streaming body has no bounded readline: spool it first
            shutil.copyfileobj(body, local, CHUNK_BYTES)
            local.seek(0)
            yield from bounded_lines(local)

    def exists(self, key: str) -> bool:
        answer = self.client.list_objects_v2(Bucket=self.bucket, Prefix=self.object_key(key), MaxKeys=1)
        return any(item["Key"] == self.object_key(key) for item in answer.get("Contents", []))

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.object_key(key))

    def keys(self, prefix: str = "") -> list[str]:
        start = self.object_key(prefix) if prefix else (f"{self.prefix}/" if self.prefix else "")
        found = []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=start):
            for item in page.get("Contents", []):
                found.append(item["Key"][len(self.prefix) + 1 :] if self.prefix else item["Key"])
        return sorted(found)


def open_storage(settings: Settings) -> FileStorage:
    """The storage the settings name: VERITY_STORAGE_URL=s3://bucket/prefix, else the data folder's storage/."""
    if settings.storage_url and settings.storage_url.startswith("s3://"):
        return S3Storage(settings.storage_url, settings.s3_endpoint_url)
    if settings.storage_url:
        return LocalStorage(settings.storage_url)
    return LocalStorage(settings.local_storage_dir)


# --- dataset versions --------------------------------------------------------------------------------------


def dataset_version_key(version_id: object) -> str:
    """The storage key of a version: its files are `<key>/train.jsonl`, `validation.jsonl`, `test.jsonl`."""
    return f"datasets/{version_id}"


def split_key(storage_key: str, split: str) -> str:
    return f"{storage_key}/{split}.jsonl"


def read_rows(storage: FileStorage, storage_key: str, split: str, limit: int | None = None) -> Iterator[dict]:
    """A split's rows as stored: {"prompt": [messages], "reference": text, ...}; none if the split is absent."""
    key = split_key(storage_key, split)
    if not storage.exists(key):
        return
    for number, line in enumerate(storage.read_lines(key)):
        if limit is not None and number >= limit:
            return
        yield json.loads(line)


def reference_reader(storage: FileStorage) -> Callable[[str, str], Iterator[str]]:
    """What the domain's save check reads: (storage key, split) → the split's references, in order."""

    def references(storage_key: str, split: str) -> Iterator[str]:
        for row in read_rows(storage, storage_key, split):
            yield row["reference"]

    return references
