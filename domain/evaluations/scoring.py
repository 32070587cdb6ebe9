"""An evaluation's scoring (the kind of answers and their settings) and main metric, checked through the same
metric registry as rewards; and the reward a run takes from its baseline (000's "The default is the baseline's").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.errors import SettingsInvalid
from domain.rewards.config import NOT_A_REWARD, PRESET_NAMES, RewardConfig, RewardConfigInvalid

TAKEN_FROM_BASELINE = (
    "Taken from the baseline's scoring and main metric. Change a field to train toward another reward."
)


def not_a_reward_message(metric_name: str) -> str:
    return f"The baseline's main metric, {metric_name}, can't be an RL reward. Choose a reward metric."


def checked_scoring(scoring: Mapping[str, Any], main_metric: str) -> tuple[dict[str, Any], str]:
    """The canonical scoring (every key of a reward but the metric) and main metric, or SettingsInvalid.

    An evaluation may use the LLM judge or RadEval as its main metric, which a reward never may.
    """
    if not isinstance(scoring, Mapping):
        raise SettingsInvalid({"scoring": "The scoring must be an object with a preset."})
    main_metric = str(main_metric or "").strip()
    if not main_metric:
        raise SettingsInvalid({"main_metric": "Choose the evaluation's main metric."})
    if main_metric.lower() in NOT_A_REWARD:
        if scoring.get("preset") not in PRESET_NAMES:
            raise SettingsInvalid({"scoring": f"Unknown kind of answers {scoring.get('preset')!r}."})
        return {"preset": scoring["preset"]}, main_metric.lower()
    try:
        config = RewardConfig.from_dict({**scoring, "metric": main_metric}).to_dict()
    except RewardConfigInvalid as problem:
        # A setting's message goes under its own key ("scoring.labels"), so a form shows it under that field.
        field = "main_metric" if problem.field == "metric" else "scoring" if problem.field == "reward" else (
            f"scoring.{problem.field}")
        raise SettingsInvalid({field: problem.message}) from None
    metric = config.pop("metric")
    return config, metric


def reward_from_baseline(scoring: Mapping[str, Any], main_metric: str) -> dict[str, Any]:
    """The reward dict a full run takes from its baseline, or SettingsInvalid under "reward" with 000's words."""
    if main_metric in NOT_A_REWARD:
        raise SettingsInvalid({"reward": not_a_reward_message(NOT_A_REWARD[main_metric])})
    try:
        return RewardConfig.from_dict({**scoring, "metric": main_metric}, from_baseline=True).to_dict()
    except RewardConfigInvalid as problem:
        raise SettingsInvalid({"reward": problem.message}) from None


def main_metric_label(scoring: Mapping[str, Any], main_metric: str) -> str:
    """ "Math Pairs · Verifiable", "LLM judge · Q&A"."""
    if main_metric in NOT_A_REWARD:
        return f"{NOT_A_REWARD[main_metric]} · {PRESET_NAMES.get(scoring.get('preset', ''), '')}"
    return RewardConfig.from_dict({**scoring, "metric": main_metric}).label
