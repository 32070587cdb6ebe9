"""Storing an uploaded version: up to three JSONL files streamed through the domain's parser into storage.

Each file is read line by line (with a bound on a line's length) and every parsed example is written to a staged
file as it passes, so memory stays flat however large the upload. Only once every file has parsed are the staged
files committed; the version is recorded after that. A bad file anywhere leaves nothing in storage and nothing in
the event store, and the refusal names the file, the line and the problem.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO
from uuid import UUID, uuid4

from domain.actors import Actor
from domain.application import Verity
from domain.datasets.examples import SHAPE_NAMES
from domain.datasets.tally import UploadTally
from domain.datasets.upload import UploadInvalid, parse_examples
from domain.datasets.version import SPLIT_NAMES, SPLITS
from domain.errors import SettingsInvalid, StorageUnavailable
from domain.written import Written
from verity.storage import FileStorage, StagedFile, bounded_lines, dataset_version_key, split_key

NO_FILES = "Choose at least one file: training, validation or test examples, one JSON example a line."
STORAGE_FAILED = (
    "The upload could not be stored: the storage is full or out of reach. Nothing was saved; try again later, "
    "or ask an owner to check Settings → Storage."
)
WRITE_BATCH = 256  # examples written to storage at once
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class UploadedFile:
    """One file of the upload: its name as the person chose it and its bytes, readable from the start."""

    filename: str
    handle: IO[bytes]


@dataclass
class StoredVersion:
    version_id: UUID
    storage_key: str
    split_counts: dict[str, int] = field(default_factory=dict)
    shape: str | None = None
    has_images: bool = False


def file_label(split: str, filename: str) -> str:
    """ "train.jsonl (training examples)"."""
    return f"{filename or split + '.jsonl'} ({SPLIT_NAMES[split]} examples)"


def store_version_files(storage: FileStorage, files: Mapping[str, UploadedFile]) -> StoredVersion:
    """Parses every file and stores its rows under a new version id; raises SettingsInvalid keyed by the split,
    or StorageUnavailable when the storage cannot take the files.

    Nothing stays in storage when any file is refused.
    """
    try:
        return _store_version_files(storage, files)
    except OSError:
        log.exception("storing an upload failed")  # the details (which disk, which bucket) are for the log
        raise StorageUnavailable(STORAGE_FAILED) from None


def _store_version_files(storage: FileStorage, files: Mapping[str, UploadedFile]) -> StoredVersion:
    chosen = [split for split in SPLITS if split in files]
    if not chosen:
        raise SettingsInvalid({"": NO_FILES})
    version_id = uuid4()
    stored = StoredVersion(version_id, dataset_version_key(version_id))
    staged: list[StagedFile] = []
    try:
        for split in chosen:
            upload = files[split]
            target = storage.stage(split_key(stored.storage_key, split))
            staged.append(target)
            tally = UploadTally()
            try:
                _write_rows(target, tally.count(parse_examples(bounded_lines(upload.handle))))
            except UploadInvalid as refused:
                raise SettingsInvalid({split: f"{file_label(split, upload.filename)}: {refused.message}"}) from None
            _check_same_shape(stored, split, upload.filename, tally)
            stored.split_counts[split] = tally.examples
            stored.shape = stored.shape or tally.shape
            stored.has_images = stored.has_images or tally.has_images
    except BaseException:
        for target in staged:
            target.discard()
        raise
    try:
        for target in staged:
            target.commit()
    except BaseException:
        _forget_quietly(storage, stored)
        raise
    return stored


def _forget_quietly(storage: FileStorage, stored: StoredVersion) -> None:
    """Removes what a failed commit left; a storage that is down may refuse that too, which is only logged (the
    version is never recorded, so its files are unreachable either way)."""
    try:
        forget_version_files(storage, stored)
    except Exception:
        log.exception("removing the files of a failed upload failed")


def record_stored_version(
    verity: Verity, storage: FileStorage, stored: StoredVersion, org_id: UUID, dataset_id: UUID, actor: Actor
) -> Written:
    """Records the version whose files are stored; if the record is refused, its files go too."""
    try:
        return verity.record_dataset_version(
            org_id,
            dataset_id,
            version_id=stored.version_id,
            storage_key=stored.storage_key,
            split_counts=stored.split_counts,
            shape=stored.shape or "messages",
            has_images=stored.has_images,
            actor=actor,
        )
    except BaseException:
        forget_version_files(storage, stored)
        raise


def forget_version_files(storage: FileStorage, stored: StoredVersion) -> None:
    for split in SPLITS:
        storage.delete(split_key(stored.storage_key, split))


def _write_rows(target: StagedFile, examples: Iterator) -> None:
    batch: list[str] = []
    for example in examples:
        batch.append(json.dumps(example.to_row(), ensure_ascii=False))
        if len(batch) == WRITE_BATCH:
            target.write(("\n".join(batch) + "\n").encode())
            batch.clear()
    if batch:
        target.write(("\n".join(batch) + "\n").encode())


def _check_same_shape(stored: StoredVersion, split: str, filename: str, tally: UploadTally) -> None:
    if stored.shape is None or tally.shape == stored.shape:
        return
    first = next(s for s in SPLITS if s in stored.split_counts)
    raise SettingsInvalid(
        {
            split: f"{file_label(split, filename)}: its examples are {SHAPE_NAMES[tally.shape or 'messages']}, "
            f"but the {SPLIT_NAMES[first]} examples are {SHAPE_NAMES[stored.shape]}. Use one format in a version."
        }
    )
