"""What the run views read from a run's settings (as Run.Saved and Run.Edited carry them, typed)."""

from __future__ import annotations

from domain.runs import objectives
from domain.runs.reward import reward_label
from domain.runs.run_settings import RunSettings
from projections.tables import Tx


def run_reward_label(tx: Tx, settings: RunSettings) -> str:
    """An RL run's reward ("Token F1 · Q&A", a custom one "exact_year (v2) · Q&A"); SFT, DPO and Head have no
    reward, so "" (the console shows "—"). A custom metric version's name and number never change, and the
    catalog applies each page before the runs (projections/registry.py), so a rebuild words it as the live view
    did."""
    reward = settings.reward
    if settings.objective != objectives.RL or not reward:
        return ""
    version = tx.get("custom_metric_versions", {"id": str(reward["custom_metric"])}) if reward.get(
        "custom_metric"
    ) else None
    return reward_label(reward, f"{version['metric_name']} (v{version['number']})" if version else None)
