"""The Configure a run form as templates draw it: 000's sections, each field with its value, hint and error.

The fields, bounds, defaults, the objectives that use each and the messages are the domain's
(`domain.runs.run_settings.ALL_FIELDS`); this module only arranges them, turns values into the text of inputs, and
places each domain message under its field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.rewards.config import METRICS, PRESET_NAMES, SYNTHETIC_PROMPTS_DEFAULT
from domain.runs import objectives
from domain.runs.run_settings import ALL_FIELDS, FIELDS_BY_NAME, RunSettings

SECTIONS = ("Run", "Reinforcement learning", "SFT and DPO", "Reward", "Advanced settings")
KINDS = FIELDS_BY_NAME["kind"].choices
# The reward's own settings, as the form names them, and which kinds of answer show each.
REWARD_SETTINGS: dict[str, tuple[str, str]] = {
    "synthetic_prompts": ("Synthetic prompts", "How many problems to generate on the fly (8–100,000)."),
    "format_bonus": (
        "Format bonus",
        "A small extra reward for <think>…</think><answer>…</answer> structure.",
    ),
    "labels": ("Allowed labels", "One label a line."),
    "response_schema": ("JSON schema", "The JSON Schema an answer must follow."),
    "fields": ("Fields to compare (optional)", "One field name a line."),
    "absolute_tolerance": ("Absolute tolerance", ""),
    "relative_tolerance": ("Relative tolerance", ""),
}
SETTINGS_OF_PRESET: dict[str, tuple[str, ...]] = {
    "qa": (),
    "classification": ("labels",),
    "structured_json": ("response_schema", "fields"),
    "numeric": ("absolute_tolerance", "relative_tolerance"),
    "verifiable": ("synthetic_prompts", "format_bonus"),
}
DEFAULT_REWARD = {
    "preset": "verifiable",
    "metric": "math_pairs",
    "synthetic_prompts": SYNTHETIC_PROMPTS_DEFAULT,
    "format_bonus": True,
}


@dataclass(frozen=True)
class FormField:
    name: str  # the input's name, as run_body_from_form reads it
    label: str
    kind: str  # "int" | "float" | "choice" | "bool" | "text" | "textarea"
    value: str
    hint: str = ""
    error: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    objectives: tuple[str, ...] = ()  # the objectives that use it; () for every one
    hidden: bool = False  # not used by the objective chosen now (kept, so switching back keeps its value)
    readonly: bool = False  # shown, not changed: e.g. the adapter's size and scaling under Start from


@dataclass(frozen=True)
class RunForm:
    """Every value as typed (text), and the domain's message for every field that was refused."""

    values: Mapping[str, str]
    errors: Mapping[str, str] = field(default_factory=dict)
    # ("custom.<version id>", "name (v3) · custom metric"): listed in Reward metric after the built-in ones (000)
    custom_metrics: tuple[tuple[str, str], ...] = ()
    # "custom.<version id>"'s version id -> "exact_year (v3)": how the Training Summary names a custom reward
    custom_metric_labels: Mapping[str, str] = field(default_factory=dict)
    # what the chosen baseline gives when Answers are "Taken from the baseline": its reward's label, or why none
    baseline_reward: str = ""
    baseline_reward_error: str = ""
    baseline_reward_settings: Mapping[str, Any] | None = None  # that reward itself
    locked: Mapping[str, str] = field(default_factory=dict)  # field name -> the hint that says why it is locked

    @classmethod
    def from_draft(cls, draft: RunSettings, project: str = "") -> RunForm:
        return cls(values=_values_of(draft, project))

    def value(self, name: str) -> str:
        return self.values.get(name, "")

    def error(self, name: str) -> str:
        return self.errors.get(name, "")

    @property
    def form_errors(self) -> list[str]:
        """Messages that belong to no field on the form, shown above it."""
        # a field the chosen objective hides can't show its message: it goes above the form too
        placed = {f.name for section in SECTIONS for f in self.section(section) if not f.hidden}
        placed |= {"name", "kind", "project", "dataset_version", "baseline"}
        return [message for key, message in self.errors.items() if key not in placed]

    @property
    def preset(self) -> str:
        """The kind of answers chosen; "" when the reward is taken from the baseline (000's default)."""
        chosen = self.value("reward_preset")
        if chosen == "" and "reward_preset" in self.values:
            return ""
        return chosen if chosen in PRESET_NAMES else "verifiable"

    @property
    def is_trial(self) -> bool:
        return self.value("kind") == "trial"

    @property
    def objective(self) -> str:
        return self.value("objective") or objectives.RL

    def shown_for(self, name: str) -> tuple[tuple[str, ...], bool]:
        """The objectives that use a field or part of the form, and whether it is hidden for the one chosen."""
        used_by = FIELDS_BY_NAME[name].objectives if name in FIELDS_BY_NAME else ()
        return used_by, bool(used_by) and self.objective not in used_by

    def section(self, section: str) -> list[FormField]:
        if section == "Reward":
            return self._reward_fields()
        return [
            FormField(
                name=spec.name,
                label=spec.label,
                kind=spec.kind,
                value=self.value(spec.name),
                hint=self.locked.get(spec.name) or spec.hint,
                error=self.error(spec.name),
                choices=spec.choices,
                objectives=self.shown_for(spec.name)[0],
                hidden=self.shown_for(spec.name)[1],
                readonly=spec.name in self.locked,
            )
            for spec in ALL_FIELDS
            if spec.section == section and spec.name != "reward"
        ]

    def _reward_fields(self) -> list[FormField]:
        preset = self.preset
        answers_are = FormField(
            "reward_preset",
            "Answers are",
            "choice",
            preset,
            error=self._reward_error("preset"),
            # "" leaves the reward to the run's baseline (000: "The default is the baseline's").
            choices=(("", "Taken from the baseline"), *PRESET_NAMES.items()),
        )
        if not preset:  # the baseline's scoring and main metric, shown as they will train
            taken = FormField(
                "baseline_reward",  # not a reward_<key>: it is shown, never read back
                "Reward metric",
                "text",
                self.baseline_reward or "—",
                error=self.baseline_reward_error or self.error("reward"),
                readonly=True,
            )
            return [answers_are, taken]
        metric_choices = tuple(METRICS[preset].items()) + self.custom_metrics
        fields_ = [
            answers_are,
            FormField(
                "reward_metric",
                "Reward metric",
                "choice",
                self.value("reward_metric"),
                hint="The metric that scores each sampled answer from 0 to 1.",
                error=self._reward_error("metric") or self.error("reward"),
                choices=metric_choices,
            ),
        ]
        for key in SETTINGS_OF_PRESET[preset]:
            label, hint = REWARD_SETTINGS[key]
            kind = (
                "bool"
                if key == "format_bonus"
                else "textarea"
                if key in ("labels", "response_schema", "fields")
                else "text"
            )
            fields_.append(
                FormField(
                    f"reward_{key}",
                    label,
                    kind,
                    self.value(f"reward_{key}"),
                    hint=hint,
                    error=self._reward_error(key),
                )
            )
        return fields_

    def _reward_error(self, key: str) -> str:
        # The domain may name a reward setting plainly ("labels") or by its place in the body.
        return self.error(f"reward_{key}") or self.error(f"reward.{key}") or self.error(key)


def _values_of(settings: RunSettings, project: str) -> dict[str, str]:
    values: dict[str, str] = {
        "project": project,
        "name": settings.name,
        "kind": settings.kind,
        "dataset_version": settings.dataset_version or "",
        "provider": settings.provider,
    }
    for spec in ALL_FIELDS:
        if spec.name != "reward":
            values[spec.name] = as_text(getattr(settings, spec.name))
    values["baseline"] = settings.baseline or ""
    values.update(reward_values(settings.reward or DEFAULT_REWARD))
    return values


def reward_values(reward: Mapping[str, Any]) -> dict[str, str]:
    """A reward as the form's reward_<key> inputs hold it."""
    values = {}
    for key, value in reward.items():
        if key in ("labels", "fields"):
            values[f"reward_{key}"] = "\n".join(value or [])
        elif key == "response_schema":
            values[f"reward_{key}"] = "" if value is None else _json(value)
        elif key == "format_bonus":
            values[f"reward_{key}"] = "on" if value else "off"
        else:
            values[f"reward_{key}"] = as_text(value)
    return values


def as_text(value: Any) -> str:
    """A setting as an input shows it: None → "", 5e-06 → "0.000005", 2.0 → "2"."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        text = f"{value:.10f}".rstrip("0").rstrip(".")
        return text if float(text) == value else repr(value)
    return str(value)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, indent=2)
