"""Structured JSON: schema validity (0 or 1) and field match (the share of compared fields right).

The whole answer must be JSON; one Markdown code fence around it is allowed, since models often add one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from domain.rewards.types import AnswerScore

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)\n?```", re.DOTALL)
_MISSING = object()


def parse_json(text: str) -> Any:
    """The JSON value the text is, or `_MISSING`: '{"a": 1}' and a fenced ```json block both parse."""
    stripped = text.strip()
    fenced = _FENCE.fullmatch(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _MISSING


def is_json(value: Any) -> bool:
    return value is not _MISSING


def schema_validator(schema: Mapping[str, Any]) -> Validator:
    return validator_for(dict(schema))(dict(schema))


def field_value(document: Any, path: str) -> Any:
    """A field by dotted path ("address.city"), or `_MISSING`."""
    current = document
    for key in path.split("."):
        if isinstance(current, Mapping) and key in current:
            current = current[key]
        elif isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        else:
            return _MISSING
    return current


@dataclass(frozen=True)
class SchemaValidity:
    schema: Mapping[str, Any]
    _validator: Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_validator", schema_validator(self.schema))

    def __call__(self, answer: str, reference: str) -> AnswerScore:
        document = parse_json(answer)
        return AnswerScore(1.0 if is_json(document) and self._validator.is_valid(document) else 0.0)


@dataclass(frozen=True)
class FieldMatch:
    """Compares the Fields to compare, or every top-level field of the reference when none are chosen."""

    fields: Sequence[str] = ()

    def __call__(self, answer: str, reference: str) -> AnswerScore:
        given, expected = parse_json(answer), parse_json(reference)
        if not is_json(given) or not is_json(expected):
            return AnswerScore(0.0)
        paths = list(self.fields) or (list(expected) if isinstance(expected, Mapping) else [])
        if not paths:
            return AnswerScore(1.0 if _same(given, expected) else 0.0)
        compared = [path for path in paths if field_value(expected, path) is not _MISSING]
        if not compared:
            return AnswerScore(0.0)
        matched = sum(_same(field_value(given, path), field_value(expected, path)) for path in compared)
        return AnswerScore(matched / len(compared))


def _same(given: Any, expected: Any) -> bool:
    """JSON equality where 1 equals 1.0 and text ignores surrounding whitespace, but true is not 1."""
    if given is _MISSING:
        return False
    if isinstance(given, bool) or isinstance(expected, bool):
        return type(given) is type(expected) and given == expected
    if isinstance(given, str) and isinstance(expected, str):
        return given.strip() == expected.strip()
    if isinstance(given, Mapping) and isinstance(expected, Mapping):
        return given.keys() == expected.keys() and all(_same(given[k], expected[k]) for k in expected)
    if isinstance(given, list) and isinstance(expected, list):
        return len(given) == len(expected) and all(_same(g, e) for g, e in zip(given, expected, strict=True))
    comparable = type(given) is type(expected) or {type(given), type(expected)} <= {int, float}
    return comparable and given == expected
