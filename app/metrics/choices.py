"""The custom metrics the Configure a run form offers in Reward metric, after the built-in ones (000)."""

from __future__ import annotations

from uuid import UUID

from domain.rewards.config import CUSTOM_PREFIX
from projections.store import ReadModels


def custom_reward_choices(read_models: ReadModels, org_id: UUID) -> list[tuple[str, str]]:
    """("custom.<version id>", "exact_year (v3) · custom metric") for every active version, by name, newest first.

    An archived version is left out: it is refused for a new run.
    """
    return [
        (f"{CUSTOM_PREFIX}{version.id}", f"{version.label} · custom metric")
        for version in read_models.custom_metric_versions(org_id)  # type: ignore[attr-defined]
        if not version.archived
    ]
