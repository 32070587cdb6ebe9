"""The run's reward as a Grader: a built-in metric from domain/rewards, or a custom metric in the sandbox."""

from __future__ import annotations

from domain.rewards.types import Grader
from trainer.spec import RewardSpec


class RewardUnusable(ValueError):
    """The reward failed its try on one reference before the model loads; the message says why, in words."""


def is_custom(reward: RewardSpec) -> bool:
    return str(reward.config.get("metric", "")).startswith("custom.")


def build_reward(reward: RewardSpec) -> Grader:
    """The grader the run scores answers with. A custom metric's sandbox starts here (lazily, only for one)."""
    if is_custom(reward):
        if not reward.custom_metric_source:
            raise RewardUnusable("The custom metric's source is missing from the run spec.")
        from trainer.sandbox import IsolationMissing, SandboxedMetric

        try:
            return SandboxedMetric(reward.custom_metric_source, name=custom_metric_title(reward))
        except IsolationMissing as missing:  # before the model loads, in words
            raise RewardUnusable(str(missing)) from None
    from domain.rewards.config import RewardConfig
    from domain.rewards.registry import build_grader

    return build_grader(RewardConfig.from_dict(reward.config))


def custom_metric_title(reward: RewardSpec) -> str:
    """'name (vV)' for the product's notes, e.g. 'brevity (v3)'."""
    name = reward.custom_metric_name or str(reward.config.get("metric", "custom"))
    return f"{name} (v{reward.custom_metric_version})" if reward.custom_metric_version else name


def try_reward_on_reference(reward: RewardSpec, grader: Grader, reference: str) -> None:
    """Score one reference against itself before the model loads; raise RewardUnusable when that fails."""
    if is_custom(reward) and reward.custom_metric_source:
        from trainer.sandbox import try_on_reference

        problem = try_on_reference(reward.custom_metric_source, reference)
        if problem:
            raise RewardUnusable(problem)
        return
    (score,) = grader.score_batch([reference], [reference])
    if score.failure is not None or not 0.0 <= score.value <= 1.0:
        raise RewardUnusable(f"The reward failed on a reference scored against itself ({score.failure}).")
