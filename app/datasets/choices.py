"""The Dataset version choices of the Configure a run form: the organization's versions RL can use."""

from __future__ import annotations

from uuid import UUID

from projections.store import ReadModels


def dataset_version_choices(read_models: ReadModels, org_id: UUID) -> list[tuple[str, str]]:
    """(version id, "gsm8k-mini v3 · 120 training, 20 validation") for each version with text training and
    validation examples, newest first within each dataset."""
    return [
        (
            str(version.id),
            f"{version.label} · {version.split_counts['train']:,} training, "
            f"{version.split_counts['validation']:,} validation",
        )
        for version in read_models.dataset_versions(org_id)  # type: ignore[attr-defined]
        if not version.archived
        and not version.has_images
        and version.split_counts["train"]
        and version.split_counts["validation"]
    ]
