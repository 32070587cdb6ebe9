"""What an agent names by its name, found by id: a dataset version ("gsm8k-mini v3") and a completed baseline
("Baseline"). A name that matches nothing is handed on as it was, so the domain refuses it in its own words."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from projections import evaluations as reads
from projections.store import ReadModels


def dataset_version_id(read_models: Any, org_id: UUID, named: str | None) -> str | None:
    """The version's id for its id or its label ("gsm8k-mini v3"); None for none."""
    text = (named or "").strip()
    if not text:
        return None
    for version in read_models.dataset_versions(org_id):
        if str(version.id) == text or version.label.casefold() == text.casefold():
            return str(version.id)
    return text


def baseline_id(read_models: ReadModels, org_id: UUID, named: str | None, dataset_version: str | None) -> str | None:
    """The completed baseline of the version (none: the Math Pairs held-out benchmark) with this id or name, the
    newest of a name; None for none."""
    text = (named or "").strip()
    if not text:
        return None
    for evaluation in completed_baselines(read_models, org_id, dataset_version):
        if evaluation["id"] == text or evaluation["name"].casefold() == text.casefold():
            return str(evaluation["id"])
    return text


def completed_baselines(read_models: ReadModels, org_id: UUID, dataset_version: str | None) -> list[dict[str, Any]]:
    """The evaluations the Baseline select offers for the version, newest first, as the read models hold them."""
    tables = read_models.tables  # type: ignore[attr-defined]
    offered = reads.completed_baselines(tables, org_id, dataset_version)
    found = (reads.evaluation(tables, org_id, UUID(evaluation_id)) for evaluation_id, _ in offered)
    return [evaluation for evaluation in found if evaluation is not None]
