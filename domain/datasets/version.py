"""The DatasetVersion aggregate: an organization's uploaded examples, by split, stored under a storage key.

The examples themselves live in storage (the caller's key); the version holds what decisions need: how many
examples each split has, their shape, and whether any has images (RL trains on text only, 000).
A public command checks; the `@event` method it calls only assigns.
"""

from __future__ import annotations

from collections.abc import Mapping
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.datasets.examples import SHAPE_NAMES
from domain.datasets.upload import RL_REFUSES_IMAGES
from domain.errors import DomainError
from domain.versions import Archivable

SPLITS = ("train", "validation", "test")
SPLIT_NAMES = {"train": "training", "validation": "validation", "test": "test"}


class DatasetVersionInvalid(DomainError):
    """A version that can't be recorded as given."""


class DatasetVersionSize:
    """How a person names a version and how many examples it has: said alike by the aggregate and its read row."""

    dataset_name: str
    number: int
    split_counts: Mapping[str, int]

    @property
    def label(self) -> str:
        """How a person names it: "gsm8k-mini v3"."""
        return f"{self.dataset_name} v{self.number}"

    @property
    def total_examples(self) -> int:
        return sum(self.split_counts.values())


class DatasetVersion(DatasetVersionSize, Archivable, Aggregate):
    """One uploaded version of a dataset, belonging to one organization."""

    @classmethod
    def upload(
        cls,
        *,
        org_id: UUID,
        dataset_name: str,
        number: int,
        storage_key: str,
        split_counts: Mapping[str, int],
        shape: str,
        has_images: bool,
        actor: dict[str, str],
        version_id: UUID | None = None,
    ) -> DatasetVersion:
        """Record a version once its file is parsed and stored; raises DatasetVersionInvalid.

        `version_id` lets the caller store the files under the version's id before the version is recorded.
        """
        name = dataset_name.strip()
        if not name:
            raise DatasetVersionInvalid("Name the dataset.")
        if number < 1:
            raise DatasetVersionInvalid("A version number starts at 1.")
        if not storage_key.strip():
            raise DatasetVersionInvalid("A version needs the storage key of its examples.")
        unknown = sorted(set(split_counts) - set(SPLITS))
        if unknown:
            raise DatasetVersionInvalid(f"Unknown split {unknown[0]!r}: use train, validation and test.")
        counts = {split: int(split_counts.get(split, 0)) for split in SPLITS}
        if any(count < 0 for count in counts.values()):
            raise DatasetVersionInvalid("A split can't have a negative number of examples.")
        if sum(counts.values()) == 0:
            raise DatasetVersionInvalid("The version has no examples.")
        if shape not in SHAPE_NAMES:
            raise DatasetVersionInvalid(f"Unknown example format {shape!r}.")
        return cls._create(
            cls.Uploaded,  # type: ignore[attr-defined]
            id=version_id,
            org_id=org_id,
            dataset_name=name,
            number=number,
            storage_key=storage_key.strip(),
            split_counts=counts,
            shape=shape,
            has_images=has_images,
            actor=dict(actor),
        )

    @event("Uploaded")
    def __init__(
        self,
        org_id: UUID,
        dataset_name: str,
        number: int,
        storage_key: str,
        split_counts: dict[str, int],
        shape: str,
        has_images: bool,
        actor: dict[str, str],
    ) -> None:
        self.org_id = org_id
        self.dataset_name = dataset_name
        self.number = number
        self.storage_key = storage_key
        self.split_counts = split_counts
        self.shape = shape
        self.has_images = has_images
        self.archived = False

    def rl_problem(self) -> str | None:
        """Why an RL run can't use this version, or None: it needs text, training and validation examples."""
        return self.training_problem("RL")

    def training_problem(self, objective_name: str) -> str | None:
        """Why a run of this objective ("RL", "SFT", "DPO") can't use this version, or None: every objective
        trains on text here, on training examples, and validates on validation examples."""
        if self.has_images:
            return RL_REFUSES_IMAGES
        missing = [SPLIT_NAMES[split] for split in ("train", "validation") if not self.split_counts[split]]
        if missing:
            absent = " and no ".join(missing)
            return (
                f"{objective_name} needs training and validation examples; {self.label} has no {absent} examples."
            )
        if self.archived:
            return f"{self.label} is archived: choose an active version."
        return None

    @event("Archived")
    def _archived(self, actor: dict[str, str]) -> None:
        self.archived = True
