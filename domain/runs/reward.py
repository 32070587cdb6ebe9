"""The reward a saved run holds: always a full, canonical reward object (000: "A saved run always holds a full
reward"), checked by domain/rewards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.errors import SettingsInvalid
from domain.rewards.config import RewardConfig, RewardConfigInvalid

CHOOSE_REWARD = "Choose a reward for RL: the metric that scores each sampled answer."
NO_BASELINE = (
    "A full run takes its reward from its baseline evaluation, and this run has no baseline yet. "
    "Choose a reward for RL: the metric that scores each sampled answer."
)


def resolve_reward(reward: dict[str, Any] | None, *, is_trial: bool) -> dict[str, Any]:
    """The canonical reward dict, or SettingsInvalid under the "reward" field.

    A full run with no reward would take its baseline's scoring and main metric; baselines come later, so
    for now it is refused with words that say why.
    """
    if reward is None:
        raise SettingsInvalid({"reward": CHOOSE_REWARD if is_trial else NO_BASELINE})
    try:
        return RewardConfig.from_dict(reward).to_dict()
    except RewardConfigInvalid as problem:
        raise SettingsInvalid({"reward": problem.message}) from None


def reward_label(reward: Mapping[str, Any], custom_metric: str | None = None) -> str:
    """ "Token F1 · Q&A"; a custom reward by its metric's name and version, "exact_year (v2) · Q&A", where the
    caller knows them (`custom_metric`, the version's label), else "Custom metric · Q&A". The one place the
    console words a reward: the Configure form's Training Summary, the Runs list and the run page's Run section."""
    config = RewardConfig.from_dict(reward)
    if config.is_custom and custom_metric:
        return f"{custom_metric} · {config.preset_name}"
    return config.label


MAKES_OWN_PROMPTS = "Math Pairs makes its own prompts: the Dataset version's rows are not used."


def makes_own_prompts(reward: Mapping[str, Any] | None) -> bool:
    """001: Math Pairs "needs no dataset", and "the Dataset field above is ignored": its prompts are generated
    from the run's seed whatever version the run names. (GSM8K trains on a version in its shape when one is
    chosen, else on the public set; Boxed-answer accuracy needs one.)"""
    if not reward:
        return False
    return reward.get("preset") == "verifiable" and reward.get("metric") == "math_pairs"


def training_prompts(reward: Mapping[str, Any] | None, dataset_version: str | None) -> str:
    """Where an RL run's training prompts come from, as the Training Summary and the run page say it."""
    if makes_own_prompts(reward):
        return MAKES_OWN_PROMPTS if dataset_version else "Math Pairs makes its own prompts."
    if dataset_version:
        return "The Dataset version's training examples."
    if reward and reward.get("metric") == "gsm8k":
        return "The public GSM8K set (no Dataset version chosen)."
    return "The built-in Math Pairs prompts (no Dataset version chosen)."  # what a worker trains on then
