"""What the New experiment form's Compute step shows, from the form as it stands (000's "In an experiment").

The step says which reward each sampled answer is scored by: "Reward: the evaluation's main metric (metric)" by
default, or the reward chosen with Choose another reward; Use the evaluation's main metric goes back. A main
metric that cannot be a reward (the LLM judge, RadEval) makes the step ask for a reward. A reused baseline fixes
the evaluation settings, and so the default reward. An experiment that reuses an adapter trains nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

from app.runs.configure import reward_of_form
from app.runs.form import DEFAULT_REWARD, FormField, RunForm, as_text
from domain.errors import SettingsInvalid
from domain.evaluations.scoring import main_metric_label
from domain.experiments.commands import CHOOSE_A_REWARD, reward_line
from domain.rewards.config import NOT_A_REWARD, PRESET_NAMES, RewardConfig, RewardConfigInvalid
from domain.runs.run_settings import ROUND_SETTINGS
from projections import evaluations as reads

TRAIN_WITH_RL, REUSE_AN_ADAPTER = "rl", "reuse"
MAIN_METRIC, ANOTHER_REWARD = "main", "other"
# The buttons of the step: what each one sets the reward choice to.
REWARD_ACTIONS = {"choose": ANOTHER_REWARD, "main": MAIN_METRIC}
# 000: "Start from, Rounds, Prompts per round, Answers per prompt and Longest sampled answer (tokens) are the
# first fields under Advanced settings on the Compute step."
FIRST_ADVANCED = ("start_run", *ROUND_SETTINGS)


@dataclass(frozen=True)
class MainMetric:
    """The evaluation's scoring and main metric, as the form or the reused baseline names them."""

    scoring: dict[str, Any]
    metric: str

    @property
    def label(self) -> str:
        try:
            return main_metric_label(self.scoring, self.metric)
        except RewardConfigInvalid:
            return self.metric

    @property
    def is_a_reward(self) -> bool:
        return bool(self.metric) and self.metric not in NOT_A_REWARD


@dataclass(frozen=True)
class ComputeStep:
    trains: bool
    reward_choice: str  # MAIN_METRIC or ANOTHER_REWARD, as the experiment will be created
    reward_line: str
    main_metric: MainMetric
    asks_for_a_reward: bool  # the main metric cannot be a reward
    from_baseline: bool
    form: RunForm

    @property
    def reward_fields(self) -> list[FormField]:
        """Answers are, Reward metric and the preset's settings; "Taken from the baseline" is a run's, not ours."""
        fields = self.form.section("Reward")
        first = fields[0]
        return [replace(first, choices=tuple(c for c in first.choices if c[0])), *fields[1:]]

    @property
    def advanced_fields(self) -> list[FormField]:
        by_name = {f.name: f for f in self.form.section("Reinforcement learning")}
        return [by_name[name] for name in FIRST_ADVANCED] + self.form.section("Advanced settings")


def main_metric_of(values: Mapping[str, str], read_models: Any, org_id: Any) -> tuple[MainMetric, bool]:
    """The main metric the experiment will measure with, and whether a reused baseline fixed it."""
    baseline_id = (values.get("baseline") or "").strip()
    if baseline_id:
        try:
            baseline = reads.evaluation(read_models.tables, org_id, UUID(baseline_id))
        except ValueError:
            baseline = None
        if baseline is not None:
            return MainMetric(json.loads(baseline["scoring_json"]), baseline["main_metric"]), True
    preset, _, metric = (values.get("metric") or "").partition(":")
    return MainMetric({"preset": preset}, metric), False


def with_compute_action(values: Mapping[str, str]) -> dict[str, str]:
    """The form after a Compute step button: Choose another reward starts from the main metric's kind of answers."""
    action = REWARD_ACTIONS.get(values.get("compute_action", ""))
    updated = {k: v for k, v in values.items() if k != "compute_action"}
    if action is not None:
        updated["chosen_reward"] = action
    return updated


def seeded_reward(values: Mapping[str, str], main: MainMetric) -> dict[str, str]:
    """Reward fields to start from when none are on the form yet: the main metric where it is a reward."""
    if values.get("reward_preset") in PRESET_NAMES:
        return dict(values)
    preset = main.scoring.get("preset") if main.is_a_reward else None
    if preset not in PRESET_NAMES:
        preset, metric = DEFAULT_REWARD["preset"], DEFAULT_REWARD["metric"]
    else:
        metric = main.metric
    seeded = {**values, "reward_preset": str(preset), "reward_metric": metric}
    if preset == "verifiable":
        seeded.setdefault("reward_synthetic_prompts", as_text(DEFAULT_REWARD["synthetic_prompts"]))
        seeded.setdefault("reward_format_bonus", "on" if main.scoring.get("format_bonus", True) else "off")
    for key, value in main.scoring.items():  # the scoring's own settings (labels, tolerances) carry over
        if key != "preset" and f"reward_{key}" not in seeded:
            seeded[f"reward_{key}"] = "\n".join(value) if isinstance(value, list) else as_text(value)
    return seeded


def compute_step(values: Mapping[str, str], errors: Mapping[str, str], read_models: Any, org_id: Any,
                 custom_metrics: tuple[tuple[str, str], ...]) -> ComputeStep:
    main, from_baseline = main_metric_of(values, read_models, org_id)
    trains = values.get("objective", TRAIN_WITH_RL) != REUSE_AN_ADAPTER
    asks = trains and not main.is_a_reward
    choice = ANOTHER_REWARD if asks or values.get("chosen_reward") == ANOTHER_REWARD else MAIN_METRIC
    shown = seeded_reward(values, main) if choice == ANOTHER_REWARD else dict(values)
    form = RunForm(values=shown, errors=dict(errors), custom_metrics=custom_metrics)
    if not trains:
        line = reward_line(main.scoring, main.metric, None, is_main=False)
    elif choice == MAIN_METRIC:
        line = f"Reward: the evaluation's main metric ({main.label})"
    else:
        line = _chosen_reward_line(shown)
    return ComputeStep(trains=trains, reward_choice=choice, reward_line=line, main_metric=main,
                       asks_for_a_reward=asks, from_baseline=from_baseline, form=form)


def _chosen_reward_line(values: Mapping[str, str]) -> str:
    try:
        return f"Reward: {RewardConfig.from_dict(reward_of_form(values)).label}"
    except (RewardConfigInvalid, SettingsInvalid):
        return CHOOSE_A_REWARD
