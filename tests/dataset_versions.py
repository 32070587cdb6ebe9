"""A dataset version as an upload records it, for the tests whose runs need one but never read its files. Tests
import it as `dataset_versions` (tests/conftest.py puts this folder on sys.path)."""

from __future__ import annotations

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
