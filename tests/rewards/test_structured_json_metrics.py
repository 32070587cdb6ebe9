"""Structured JSON rewards: schema validity scores 1 for an answer that is JSON valid against the schema;
field match gives the share of the compared fields the answer gets right."""

from __future__ import annotations

import pytest

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
VALIDITY = {"preset": "structured_json", "metric": "schema_validity", "response_schema": PERSON}
FIELDS = {"preset": "structured_json", "metric": "field_match"}
REFERENCE = '{"name": "Ada", "age": 36, "city": "London"}'


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"name": "Ada", "age": 36}', 1.0),
        ('```json\n{"name": "Ada", "age": 36}\n```', 1.0),
        ('{"name": "Ada", "age": "36"}', 0.0),
        ('{"name": "Ada"}', 0.0),
        ('Here it is: {"name": "Ada", "age": 36}', 0.0),
        ("", 0.0),
        ("[" * 100_000, 0.0),
    ],
)
def test_schema_validity(score_with, answer, expected):
    assert score_with(VALIDITY, answer, REFERENCE).value == expected


def test_field_match_compares_every_reference_field_by_default(score_with):
    assert score_with(FIELDS, '{"name": "Ada", "age": 36.0, "city": "London"}', REFERENCE).value == 1.0
    assert score_with(
        FIELDS, '{"name": "Ada", "age": 37, "city": " London "}', REFERENCE
    ).value == pytest.approx(2 / 3)
    assert score_with(FIELDS, '{"name": "Ada", "age": true}', '{"name": "Ada", "age": 1}').value == 0.5
    assert score_with(FIELDS, "not json", REFERENCE).value == 0.0


def test_field_match_compares_only_the_chosen_fields_with_dotted_paths(score_with):
    reward = {**FIELDS, "fields": ["name", "address.city"]}
    reference = '{"name": "Ada", "age": 36, "address": {"city": "London"}}'
    assert score_with(reward, '{"name": "Ada", "address": {"city": "London"}}', reference).value == 1.0
    assert (
        score_with(reward, '{"name": "Ada", "age": 99, "address": {"city": "Paris"}}', reference).value == 0.5
    )
    assert score_with(reward, '{"name": "Ada", "address": "London"}', reference).value == 0.5


def test_field_match_of_documents_that_are_not_objects_is_all_or_nothing(score_with):
    assert score_with(FIELDS, "[1, 2, 3]", "[1, 2, 3]").value == 1.0
    assert score_with(FIELDS, "[1, 2]", "[1, 2, 3]").value == 0.0
