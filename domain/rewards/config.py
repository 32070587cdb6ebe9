"""The reward a run trains toward: one metric of one kind of answer, with the settings that kind needs.

The API shape is 000's {preset, metric, labels, response_schema, fields, absolute_tolerance,
relative_tolerance, custom_metric} plus 001's {synthetic_prompts, format_bonus} for the built-in verifiable
tasks. `from_dict` validates and normalises (settings a preset does not use are cleared, so a saved run
always holds one full, canonical reward); `to_dict` gives every key back.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

PRESET_NAMES: dict[str, str] = {
    "qa": "Q&A",
    "classification": "Classification",
    "structured_json": "Structured JSON",
    "numeric": "Numeric",
    "verifiable": "Verifiable",
}

# The built-in metrics of each preset, in the order a form lists them, with the names a person reads.
METRICS: dict[str, dict[str, str]] = {
    "qa": {
        "exact_match": "Exact match",
        "normalized_exact_match": "Normalized exact match",
        "token_f1": "Token F1",
    },
    "classification": {"accuracy": "Accuracy"},
    "structured_json": {"schema_validity": "Schema validity", "field_match": "Field match"},
    "numeric": {"numeric_accuracy": "Numeric accuracy"},
    "verifiable": {"math_pairs": "Math Pairs", "gsm8k": "GSM8K accuracy", "boxed": "Boxed-answer accuracy"},
}

# Metrics an evaluation may use that only a person or another model can judge: never a reward (000).
NOT_A_REWARD: dict[str, str] = {"llm_judge": "LLM judge", "radeval": "RadEval"}

CUSTOM_PREFIX = "custom."
SYNTHETIC_PROMPTS_DEFAULT = 256
SYNTHETIC_PROMPTS_RANGE = (8, 100_000)

_KEYS = (
    "preset",
    "metric",
    "labels",
    "response_schema",
    "fields",
    "absolute_tolerance",
    "relative_tolerance",
    "custom_metric",
    "synthetic_prompts",
    "format_bonus",
)

# JSON Schema keywords: a non-empty schema object must use at least one, so {"name": "x"} is refused.
_SCHEMA_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "items", "enum", "const", "anyOf", "oneOf", "allOf", "not",
        "$ref", "$schema", "additionalProperties", "patternProperties", "minimum", "maximum", "minLength",
        "maxLength", "pattern", "format", "minItems", "maxItems", "prefixItems", "$defs", "definitions",
        "title", "description",
    }
)  # fmt: skip


class RewardConfigInvalid(ValueError):
    """A reward the user asked for that can't be used; `message` is the user-facing words, `field` the key."""

    def __init__(self, message: str, field: str = "metric") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class RewardConfig:
    preset: str
    metric: str
    labels: tuple[str, ...] = ()
    response_schema: dict[str, Any] | None = None
    fields: tuple[str, ...] = ()
    absolute_tolerance: float = 0.0
    relative_tolerance: float = 0.0
    custom_metric: str | None = None
    synthetic_prompts: int | None = None
    format_bonus: bool = False

    @property
    def is_custom(self) -> bool:
        return self.custom_metric is not None

    @property
    def preset_name(self) -> str:
        return PRESET_NAMES[self.preset]

    @property
    def metric_name(self) -> str:
        if self.is_custom:
            return "Custom metric"
        return METRICS[self.preset][self.metric]

    @property
    def label(self) -> str:
        """The reward as a person reads it, e.g. "Token F1 · Q&A"."""
        return f"{self.metric_name} · {self.preset_name}"

    def label_with_custom_name(self, name: str, version: int | str) -> str:
        """A custom reward's label once the caller knows its name, e.g. "exact_year (v3) · Numeric"."""
        return f"{name} (v{version}) · {self.preset_name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "metric": self.metric,
            "labels": list(self.labels),
            "response_schema": self.response_schema,
            "fields": list(self.fields),
            "absolute_tolerance": self.absolute_tolerance,
            "relative_tolerance": self.relative_tolerance,
            "custom_metric": self.custom_metric,
            "synthetic_prompts": self.synthetic_prompts,
            "format_bonus": self.format_bonus,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, from_baseline: bool = False) -> RewardConfig:
        """Validate a reward from the API, a form or a baseline's scoring; raise RewardConfigInvalid.

        `from_baseline` words the refusal of a judge metric as 000 does for a default taken from a baseline.
        """
        if not isinstance(data, Mapping):
            raise RewardConfigInvalid("The reward must be an object with a preset and a metric.", "reward")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise RewardConfigInvalid(f"The reward has unknown fields: {', '.join(unknown)}.", unknown[0])

        metric = data.get("metric")
        if isinstance(metric, str) and metric.strip().lower() in NOT_A_REWARD:
            name = NOT_A_REWARD[metric.strip().lower()]
            if from_baseline:
                raise RewardConfigInvalid(
                    f"The baseline's main metric, {name}, can't be an RL reward. Choose a reward metric."
                )
            raise RewardConfigInvalid(
                f"The {name} can't be an RL reward: only a person or another model can judge its answers. "
                "Choose a reward metric."
                if name == "LLM judge"
                else f"{name} can't be an RL reward: only a person or another model can judge its answers. "
                "Choose a reward metric."
            )

        preset = data.get("preset")
        if preset not in PRESET_NAMES:
            raise RewardConfigInvalid(
                f"Unknown kind of answers {preset!r}: choose one of {', '.join(PRESET_NAMES)}.", "preset"
            )
        if not isinstance(metric, str) or not metric:
            raise RewardConfigInvalid("Choose a reward for RL: the metric that scores each sampled answer.")

        custom_metric = _custom_metric(metric, data.get("custom_metric"))
        if custom_metric is not None:
            metric = CUSTOM_PREFIX + custom_metric
        elif metric not in METRICS[preset]:
            raise RewardConfigInvalid(
                f"Unknown reward metric {metric!r} for {PRESET_NAMES[preset]} answers: choose one of "
                f"{', '.join(METRICS[preset])}, or a custom metric."
            )

        settings: dict[str, Any] = {}
        if preset == "classification":
            settings["labels"] = _labels(data.get("labels"))
        if preset == "structured_json":
            settings["response_schema"] = _schema(
                data.get("response_schema"), required=metric == "schema_validity"
            )
            settings["fields"] = _fields(data.get("fields"))
        if preset == "numeric":
            settings["absolute_tolerance"] = _tolerance(data.get("absolute_tolerance"), "absolute_tolerance")
            settings["relative_tolerance"] = _tolerance(data.get("relative_tolerance"), "relative_tolerance")
        if preset == "verifiable" and custom_metric is None:  # a custom metric gets no bonus added to it
            settings["format_bonus"] = _bool(data.get("format_bonus", True), "format_bonus")
            if metric == "math_pairs":
                settings["synthetic_prompts"] = _synthetic_prompts(data.get("synthetic_prompts"))
        return cls(preset=preset, metric=metric, custom_metric=custom_metric, **settings)


def _custom_metric(metric: str, custom_metric: Any) -> str | None:
    """The custom metric's version id, from `custom.<id>` and/or `custom_metric`, which must agree."""
    named_in_metric = metric.startswith(CUSTOM_PREFIX)
    if not named_in_metric and custom_metric is None:
        return None
    if not named_in_metric:
        raise RewardConfigInvalid(
            f"custom_metric is set, so the metric must be custom.{custom_metric}, not {metric!r}.",
            "custom_metric",
        )
    version_id = _version_id(metric[len(CUSTOM_PREFIX) :])
    if custom_metric is not None and _version_id(custom_metric) != version_id:
        raise RewardConfigInvalid(
            f"The metric names custom metric version {version_id} but custom_metric is {custom_metric!r}.",
            "custom_metric",
        )
    return version_id


def _version_id(text: Any) -> str:
    try:
        return str(uuid.UUID(str(text)))
    except ValueError:
        raise RewardConfigInvalid(
            f"{text!r} is not a custom metric version ID: use custom. followed by the version's ID.",
            "custom_metric",
        ) from None


def _labels(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, list | tuple) and not value):
        raise RewardConfigInvalid(
            "Classification needs Allowed labels: list the labels an answer may be.", "labels"
        )
    if not isinstance(value, list | tuple) or not all(isinstance(label, str) for label in value):
        raise RewardConfigInvalid("Allowed labels must be a list of text labels.", "labels")
    labels = tuple(label.strip() for label in value)
    if any(not label for label in labels):
        raise RewardConfigInvalid("Allowed labels can't include an empty label.", "labels")
    folded = [label.casefold() for label in labels]
    if len(set(folded)) != len(folded):
        raise RewardConfigInvalid("Allowed labels must differ from each other (ignoring case).", "labels")
    if len(labels) < 2:
        raise RewardConfigInvalid("Classification needs at least two Allowed labels.", "labels")
    return labels


def _schema(value: Any, *, required: bool) -> dict[str, Any] | None:
    if value is None:
        if required:
            raise RewardConfigInvalid(
                "Schema validity needs a JSON schema for the answers.", "response_schema"
            )
        return None
    if not isinstance(value, Mapping) or (value and not _SCHEMA_KEYWORDS.intersection(value)):
        raise RewardConfigInvalid(
            'The JSON schema must be a JSON Schema object, such as {"type": "object"}.', "response_schema"
        )
    try:
        validator_for(dict(value)).check_schema(dict(value))
    except SchemaError as error:
        raise RewardConfigInvalid(
            f"The JSON schema is not valid: {error.message}.", "response_schema"
        ) from None
    return dict(value)


def _fields(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(
        isinstance(item, str) and item.strip() for item in value
    ):
        raise RewardConfigInvalid(
            'Fields to compare must be a list of field names, such as ["name", "age"].', "fields"
        )
    return tuple(dict.fromkeys(item.strip() for item in value))


def _tolerance(value: Any, key: str) -> float:
    name = "Absolute tolerance" if key == "absolute_tolerance" else "Relative tolerance"
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RewardConfigInvalid(f"{name} must be a number.", key)
    if value < 0:
        raise RewardConfigInvalid(f"{name} can't be negative.", key)
    return float(value)


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise RewardConfigInvalid("Format bonus must be true or false.", key)
    return value


def _synthetic_prompts(value: Any) -> int:
    low, high = SYNTHETIC_PROMPTS_RANGE
    if value is None:
        return SYNTHETIC_PROMPTS_DEFAULT
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RewardConfigInvalid(
            f"Synthetic prompts must be a whole number from {low:,} to {high:,}.", "synthetic_prompts"
        )
    return value
