"""The reward a saved run holds: always a full, canonical reward object (000: "A saved run always holds a full
reward"), checked by domain/rewards."""

from __future__ import annotations

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


def reward_label(reward: dict[str, Any]) -> str:
    """ "Token F1 · Q&A"."""
    return RewardConfig.from_dict(reward).label
