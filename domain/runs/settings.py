"""The parsers of a run's settings: the API body and the URL-encoded form, each to checked `RunSettings`.

Every bad field is refused at once (SettingsInvalid), in the words of the field's bounds (domain/runs/fields.py);
what saving checks beyond one field (the model, the reward, Start from) is domain/runs/draft_checks.py's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from domain.errors import SettingsInvalid
from domain.runs import objectives
from domain.runs.fields import FieldSpec
from domain.runs.run_settings import ALL_FIELDS, FIELDS_BY_NAME, OBJECTIVE_BLOCKS, RunSettings, field_names

_KIND = FIELDS_BY_NAME["kind"]
KIND_MESSAGE = f"{_KIND.label} must be {' or '.join(label for _, label in _KIND.choices)}."
OBJECTIVE_MESSAGE = objectives.OBJECTIVE_MESSAGE
METHOD_MESSAGE = 'RL trains a LoRA adapter: training.method must be "lora".'
GPU_COUNT_MESSAGE = "RL trains on one GPU: training.gpu_count must be 1."
WINDOW_MESSAGE = (
    "Training window (tokens) must be larger than Longest sampled answer (tokens): each prompt and "
    "the longest sampled answer must fit in it."
)
# The settings `training` holds itself (beside its rl, advanced and objective blocks); the objective is read first.
TRAINING_SETTINGS = tuple(spec.name for spec in FIELDS_BY_NAME.values() if spec.block == "training" and
                          spec.name != "objective")


def _parse_value(spec: FieldSpec, raw: Any) -> Any:
    """The value in its type, or raises ValueError with the field's bounds message."""
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        if spec.optional:
            return None
        raise ValueError(spec.bounds_message())
    if spec.kind == "choice":
        value = str(raw).strip()
        if value not in {choice for choice, _ in spec.choices}:
            raise ValueError(spec.bounds_message())
        return value
    if spec.kind == "text":
        return str(raw).strip()
    if isinstance(raw, bool):
        raise ValueError(spec.bounds_message())
    try:
        number = float(str(raw).replace(",", "").strip()) if isinstance(raw, str) else float(raw)
    except (TypeError, ValueError):
        raise ValueError(spec.bounds_message()) from None
    if not math.isfinite(number):
        raise ValueError(spec.bounds_message())
    if spec.kind == "int":
        if not number.is_integer():
            raise ValueError(spec.bounds_message())
        number = int(number)
    if spec.above_minimum:
        if spec.minimum is not None and number <= spec.minimum:
            raise ValueError(spec.bounds_message())
        return number
    if (spec.minimum is not None and number < spec.minimum) or (
        spec.maximum is not None and number > spec.maximum
    ):
        raise ValueError(spec.bounds_message())
    return number


def _draft_from_values(values: Mapping[str, Any], errors: dict[str, str]) -> RunSettings:
    """Checks every setting in `values` (missing ones take defaults), collecting every message in `errors`."""
    parsed: dict[str, Any] = {}
    if "learning_rate" not in values and values.get("objective") in objectives.LEARNING_RATE_DEFAULTS:
        values = {**values, "learning_rate": objectives.LEARNING_RATE_DEFAULTS[values["objective"]]}
    for spec in ALL_FIELDS:
        if spec.name not in values or spec.name == "reward":
            continue
        try:
            parsed[spec.name] = _parse_value(spec, values[spec.name])
        except ValueError as problem:
            errors[spec.name] = str(problem)
    reward = values.get("reward")
    if reward is not None and not isinstance(reward, dict):
        errors["reward"] = "Reward must be an object with a preset and a metric, or null."
    else:
        parsed["reward"] = reward
    kind = values.get("kind") or _KIND.default
    if kind not in {value for value, _ in _KIND.choices}:
        errors["kind"] = KIND_MESSAGE
        kind = _KIND.default
    dataset_version = values.get("dataset_version")
    name = str(values.get("name") or "").strip()
    if len(name) > (FIELDS_BY_NAME["name"].maximum or len(name)):
        errors["name"] = FIELDS_BY_NAME["name"].bounds_message()
    draft = RunSettings(
        name=name,
        kind=kind,
        provider=str(values.get("provider") or FIELDS_BY_NAME["provider"].default),
        dataset_version=str(dataset_version).strip() or None if dataset_version is not None else None,
        baseline=str(values["baseline"]).strip() or None if values.get("baseline") is not None else None,
        **parsed,
        given=frozenset(parsed),
    )
    if (
        objectives.is_rl(draft.objective)
        and "training_window" not in errors
        and "max_answer_tokens" not in errors
        and (draft.max_answer_tokens >= draft.training_window)
    ):
        errors["training_window"] = WINDOW_MESSAGE
    batch_checked = not ({"batch_size", "micro_batch_size"} & errors.keys())
    # A micro batch at least as large as the batch takes the whole batch in one pass (the trainer's micro batch
    # is then the batch), so only a smaller one must divide it: SFT's batch of 8 saves beside RL's micro batch 32.
    if (
        not objectives.is_rl(draft.objective)
        and batch_checked
        and draft.micro_batch_size < draft.batch_size
        and draft.batch_size % draft.micro_batch_size
    ):
        errors["batch_size"] = objectives.BATCH_MESSAGE
    return draft


def run_body_from_api(body: dict[str, Any]) -> RunSettings:
    """The API body (see RunSettings.to_api) to a draft; refuses every bad field at once."""
    if not isinstance(body, dict):
        raise SettingsInvalid({"": "The body must be a JSON object."})
    errors: dict[str, str] = {}
    training = body.get("training") or {}
    if not isinstance(training, dict):
        raise SettingsInvalid({"training": "training must be an object."})
    objective = training.get("objective", objectives.RL)
    if objective not in objectives.OBJECTIVE_NAMES:
        errors["objective"] = OBJECTIVE_MESSAGE
        objective = objectives.RL
    if training.get("method", "lora") != "lora":
        errors["method"] = METHOD_MESSAGE
    if training.get("gpu_count", 1) != 1:
        errors["gpu_count"] = GPU_COUNT_MESSAGE
    values: dict[str, Any] = {key: body[key] for key in ("name", "kind", "dataset_version", "baseline") if key in body}
    values["objective"] = objective
    values.update({key: training[key] for key in TRAINING_SETTINGS if key in training})
    for block_name in ("rl", "advanced", *((objective,) if objective in OBJECTIVE_BLOCKS else ())):
        block = training.get(block_name) or {}
        if not isinstance(block, dict):
            errors[block_name] = f"training.{block_name} must be an object."
            continue
        values.update(field_names(block_name, block))
    if "learning_rate" in training:  # "omitting the learning rate uses 5e-6", wherever a client puts it
        values.setdefault("learning_rate", training["learning_rate"])
    draft = _draft_from_values(values, errors)
    if errors:
        raise SettingsInvalid(errors)
    return draft


def _reward_from_form(form: Mapping[str, str]) -> dict[str, Any] | None:
    """Form fields `reward_<key>` to the reward object; lists one a line or comma-separated, JSON schemas."""
    raw = {key.removeprefix("reward_"): value for key, value in form.items() if key.startswith("reward_")}
    if not str(raw.get("preset", "")).strip():
        return None
    reward: dict[str, Any] = {}
    for key, value in raw.items():
        text = str(value).strip()
        if key in ("labels", "fields"):
            reward[key] = [item.strip() for item in text.replace(",", "\n").splitlines() if item.strip()]
        elif key == "response_schema":
            try:
                reward[key] = json.loads(text) if text else None
            except json.JSONDecodeError:
                reward[key] = text  # the reward's own check refuses it with its words
        elif key in ("absolute_tolerance", "relative_tolerance", "synthetic_prompts"):
            try:
                reward[key] = float(text) if text else None
            except ValueError:
                reward[key] = text
            if key == "synthetic_prompts" and isinstance(reward[key], float) and reward[key].is_integer():
                reward[key] = int(reward[key])
        elif key == "format_bonus":
            reward[key] = text.lower() in ("on", "true", "1", "yes")
        else:
            reward[key] = text or None
    return reward


def run_body_from_form(form: Mapping[str, str]) -> RunSettings:
    """A URL-encoded form (field names as RunSettings names them; the reward as reward_<key>) to a draft."""
    values: dict[str, Any] = {key: form[key] for key in form if key in FIELDS_BY_NAME and key != "reward"}
    values["reward"] = _reward_from_form(form)
    errors: dict[str, str] = {}
    draft = _draft_from_values(values, errors)
    if errors:
        raise SettingsInvalid(errors)
    return draft


CONTINUE_SETTINGS = ("rounds", "time_limit_hours")  # what "Continue from round N" may change


def continue_changes(values: Mapping[str, Any]) -> dict[str, Any]:
    """Continue from round N's optional Rounds and Time limit (hours), from the form or the API body: each one
    given, checked against its bounds; empty or left out keeps the run's. Refuses every bad one at once."""
    changes: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in CONTINUE_SETTINGS:
        raw = values.get(name)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        try:
            changes[name] = _parse_value(FIELDS_BY_NAME[name], raw)
        except ValueError as problem:
            errors[name] = str(problem)
    if errors:
        raise SettingsInvalid(errors)
    return changes
