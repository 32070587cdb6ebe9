"""The Verity application's dataset commands, and the check a run draft that names a version must pass.

A mixin of `domain.application.Verity` (it uses the application's `_get` and `_save`). The domain reads no
files: the examples live in storage, and the references a draft is checked against come from a reader the
wiring gives the application (`reference_reader`), called with the version's storage key and a split.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.datasets.dataset import MAX_NAME, Dataset
from domain.datasets.version import SPLIT_NAMES, DatasetVersion, DatasetVersionInvalid
from domain.errors import DomainError, NotFound, SettingsInvalid
from domain.rewards.config import RewardConfig, RewardConfigInvalid
from domain.rewards.references import check_references, incompatible_references_message
from domain.verity_parts import VerityParts
from domain.written import Written

# (storage key, split) → the split's references in order; the wiring reads them from storage.
ReferenceReader = Callable[[str, str], Iterable[str]]
RL_SPLITS = ("train", "validation")  # test examples are never used by RL: they stay held out (000)


class DatasetCommands(VerityParts):
    reference_reader: ReferenceReader | None = None

    def get_dataset(self, org_id: UUID, dataset_id: UUID) -> Dataset:
        return self._get(Dataset, dataset_id, org_id, "dataset")

    def get_dataset_version(self, org_id: UUID | None, version_id: UUID) -> DatasetVersion:
        """`org_id` None is for the jobs, which act for whichever organization owns the version."""
        return self._get(DatasetVersion, version_id, org_id, "dataset version")

    def create_dataset(self, org_id: UUID, name: str, actor: Actor) -> Written:
        self.get_organization(org_id)
        name = " ".join(name.split())
        if not name:
            raise SettingsInvalid({"name": "Name the dataset."})
        if len(name) > MAX_NAME:
            raise SettingsInvalid({"name": f"A dataset's name can have at most {MAX_NAME} characters."})
        if Dataset.create_id(org_id, name) in self.repository:
            raise SettingsInvalid({"name": f"A dataset named {name} already exists."})
        dataset = Dataset(org_id=org_id, name=name, actor=actor.to_dict())
        return Written(dataset.id, self._save(dataset))

    def record_dataset_version(
        self,
        org_id: UUID,
        dataset_id: UUID,
        *,
        version_id: UUID,
        storage_key: str,
        split_counts: Mapping[str, int],
        shape: str,
        has_images: bool,
        actor: Actor,
    ) -> Written:
        """Records a version whose files are parsed and stored; its number is the dataset's next."""
        dataset = self.get_dataset(org_id, dataset_id)
        try:
            version = DatasetVersion.upload(
                org_id=org_id,
                dataset_name=dataset.name,
                number=dataset.next_number,
                storage_key=storage_key,
                split_counts=split_counts,
                shape=shape,
                has_images=has_images,
                actor=actor.to_dict(),
                version_id=version_id,
            )
        except DatasetVersionInvalid as problem:
            raise SettingsInvalid({"": problem.message}) from None
        dataset.add_version(version.id, actor.to_dict())
        return Written(version.id, self._save(dataset, version))

    # --- the check of a run draft --------------------------------------------------------------------------
    def dataset_version_problems(
        self, org_id: UUID, dataset_version: str | None, reward: Any, objective_name: str = "RL"
    ) -> dict[str, str]:
        """What keeps a draft from training on its version, under "dataset_version"; {} when nothing does.

        The version must be one of the organization's, usable by the objective (text, training and validation
        examples; `objective_name` is "RL", "SFT" or "DPO", the words of the refusal),
        and every training and validation reference must suit the reward (000: "Incompatible reference
        answers:" and up to 20 examples). The references are checked only once the reward itself is valid.
        """
        if not dataset_version:
            return {}
        try:
            version = self.get_dataset_version(org_id, UUID(str(dataset_version)))
        except (ValueError, NotFound):
            return {"dataset_version": "Choose a dataset version of this organization."}
        problem = version.training_problem(objective_name)
        if problem is not None:
            return {"dataset_version": problem}
        try:
            config = RewardConfig.from_dict(reward) if isinstance(reward, Mapping) else None
        except RewardConfigInvalid:
            config = None
        if config is None:
            return {}
        problems = check_references(config, self._references(version), names=_example_names(version))
        return {"dataset_version": incompatible_references_message(problems)} if problems else {}

    def _references(self, version: DatasetVersion) -> Iterator[str]:
        if self.reference_reader is None:
            raise DomainError("The references of a dataset version can't be read here: no storage is connected.")
        read = self.reference_reader
        return chain.from_iterable(read(version.storage_key, split) for split in RL_SPLITS)


def _example_names(version: DatasetVersion) -> Iterator[str]:
    """ "training example 1" … then "validation example 1" …, in the order the references are read."""
    for split in RL_SPLITS:
        for number in range(1, version.split_counts[split] + 1):
            yield f"{SPLIT_NAMES[split]} example {number}"
