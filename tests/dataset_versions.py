"""A dataset version as an upload records it, for the tests whose runs need one but never read its files. Tests
import it as `dataset_versions` (tests/conftest.py puts this folder on sys.path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from domain.actors import Actor
from domain.application import Verity


def recorded_version(
    verity: Verity,
    org_id: UUID,
    dataset_id: UUID,
    actor: Actor,
    *,
    storage_key: str,
    shape: str = "messages",
    train: int = 8,
    validation: int = 2,
) -> UUID:
    """A version of `dataset_id` recorded by `actor`: `shape` examples without images, `train` for training,
    `validation` for validation and none for test, its files said to be at `storage_key`."""
    split_counts = {"train": train, "validation": validation, "test": 0}
    version = verity.record_dataset_version(
        org_id, dataset_id, version_id=uuid4(), storage_key=storage_key, split_counts=split_counts, shape=shape,
        has_images=False, actor=actor,
    )  # fmt: skip
    return version.id


SPEEDS_OWNER = Actor("person", "owner@localhost", "owner@localhost")


def speeds_version(world: Any, tmp_path: Path) -> str:
    """A messages version uploaded into `world`'s storage (4 training and 2 validation examples of speeds): its
    files are there for the jobs to read. `world`: the jobs tests' World."""
    return uploaded_version(world, tmp_path, "speeds", {
        split: [(f"Speed for {2 * n} km in 2 hours?", str(n)) for n in numbers]
        for split, numbers in {"train": range(1, 5), "validation": range(10, 12)}.items()
    })


def uploaded_version(world: Any, tmp_path: Path, name: str, examples: dict[str, list[tuple[str, str]]]) -> str:
    """A messages version of a new dataset `name`, uploaded into `world`'s storage as the console stores one:
    `examples` per split, each a (user message, assistant answer). → the version's id"""
    from app.datasets.upload import UploadedFile, record_stored_version, store_version_files
    from verity.storage import open_storage

    files = {}
    for split, pairs in examples.items():
        path = tmp_path / f"{split}.jsonl"
        path.write_text("".join(json.dumps({"messages": [
            {"role": "user", "content": question}, {"role": "assistant", "content": answer}]}) + "\n"
            for question, answer in pairs))
        files[split] = UploadedFile(path.name, path.open("rb"))
    storage = open_storage(world.settings)
    dataset_id = world.verity.create_dataset(world.org_id, name, SPEEDS_OWNER).id
    return str(record_stored_version(world.verity, storage, store_version_files(storage, files), world.org_id,
                                     dataset_id, SPEEDS_OWNER).id)
