"""The check a draft runs on save (000): every training and validation reference must suit the reward.

A classification reference must be one of the labels, a numeric one a plain number, a JSON one valid JSON
(and valid against the schema), a verifiable one must hold the final answer the task reads; no reference may
be over 32,000 characters. Problems name the example, and at most 20 are reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import count

from domain.rewards.config import RewardConfig
from domain.rewards.custom import REFERENCE_CHARACTERS
from domain.rewards.extract import gsm8k_reference_number, last_boxed, plain_number
from domain.rewards.metrics.classification import normalize_label
from domain.rewards.metrics.structured_json import field_value, is_json, parse_json, schema_validator

MAX_PROBLEMS = 20
MESSAGE_START = "Incompatible reference answers:"

# (reference) -> what is wrong with it, or None
ReferenceCheck = Callable[[str], str | None]


def check_references(
    config: RewardConfig, references: Iterable[str], *, names: Iterable[str] | None = None
) -> list[str]:
    """Up to 20 problems, e.g. 'example 3: "maybe" is not one of the labels (yes, no)'; [] when all suit.

    Examples are named "example N" (from 1) in the order given, or by `names` (e.g. "training example 12").
    Stops reading at the 20th problem, so a large version costs little when it is badly wrong.
    """
    check = _check_for(config)
    example_names = iter(names) if names is not None else (f"example {number}" for number in count(1))
    problems: list[str] = []
    for reference, name in zip(references, example_names, strict=False):
        problem = _too_long(reference) or check(reference)
        if problem is not None:
            problems.append(f"{name}: {problem}")
            if len(problems) == MAX_PROBLEMS:
                break
    return problems


def incompatible_references_message(problems: list[str]) -> str:
    """The refusal of a draft: 'Incompatible reference answers: example 3: ...; example 9: ....'"""
    return f"{MESSAGE_START} {'; '.join(problems[:MAX_PROBLEMS])}."


def _too_long(reference: str) -> str | None:
    if len(reference) > REFERENCE_CHARACTERS:
        return f"the reference has {len(reference):,} characters, over the {REFERENCE_CHARACTERS:,} allowed"
    return None


def _quoted(reference: str) -> str:
    text = " ".join(reference.split())
    return repr(text if len(text) <= 40 else text[:39] + "…")


def _check_for(config: RewardConfig) -> ReferenceCheck:
    if config.is_custom:
        return lambda reference: None  # it reads references its own way: only the length limit applies
    match config.preset, config.metric:
        case "classification", _:
            return _one_of_labels(config.labels)
        case "numeric", _:
            return _plain_number
        case "structured_json", _:
            return _json_document(config)
        case "verifiable", "boxed":
            return boxed_ground_truth_problem
        case "verifiable", _:
            return _final_number
    return _not_empty


def _not_empty(reference: str) -> str | None:
    return "the reference is empty" if not reference.strip() else None


def _one_of_labels(labels: tuple[str, ...]) -> ReferenceCheck:
    allowed = {normalize_label(label) for label in labels}

    def check(reference: str) -> str | None:
        if normalize_label(reference) in allowed:
            return None
        return f"{_quoted(reference)} is not one of the labels ({', '.join(labels)})"

    return check


def _plain_number(reference: str) -> str | None:
    return None if plain_number(reference) is not None else f"{_quoted(reference)} is not a plain number"


def _json_document(config: RewardConfig) -> ReferenceCheck:
    validator = schema_validator(config.response_schema) if config.response_schema is not None else None

    def check(reference: str) -> str | None:
        document = parse_json(reference)
        if not is_json(document):
            return f"{_quoted(reference)} is not valid JSON"
        if validator is not None:
            error = next(iter(validator.iter_errors(document)), None)
            if error is not None:
                return f"the reference does not follow the JSON schema: {error.message}"
        missing = [path for path in config.fields if not _has_field(document, path)]
        if missing:
            return f"the reference has no field {', '.join(missing)}"
        return None

    return check


def _has_field(document: object, path: str) -> bool:
    return is_json(field_value(document, path))


def _final_number(reference: str) -> str | None:
    if gsm8k_reference_number(reference) is not None:
        return None
    return f'{_quoted(reference)} has no final number (a number, or GSM8K\'s "#### 72")'


def boxed_ground_truth_problem(reference: str) -> str | None:
    if "\\boxed" in reference or "\\fbox" in reference:
        content = last_boxed(reference)
        if content is None or not content.strip():
            return f"{_quoted(reference)} has no \\boxed{{...}} content"
        return None
    return _not_empty(reference)
