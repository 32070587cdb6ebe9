"""Saving a draft checks every reference against the reward (000): a reference that doesn't suit the reward is
refused with "Incompatible reference answers:" and up to 20 examples."""

from __future__ import annotations

import uuid

from domain.rewards.config import RewardConfig
from domain.rewards.references import check_references, incompatible_references_message


def problems(reward: dict, references: list[str], **kwargs) -> list[str]:
    return check_references(RewardConfig.from_dict(reward), references, **kwargs)


def test_classification_references_must_be_labels():
    reward = {"preset": "classification", "metric": "accuracy", "labels": ["yes", "no"]}
    assert problems(reward, ["yes", "No", "maybe", "yes"]) == [
        "example 3: 'maybe' is not one of the labels (yes, no)"
    ]


def test_numeric_references_must_be_plain_numbers():
    reward = {"preset": "numeric", "metric": "numeric_accuracy"}
    assert problems(reward, ["80", "-1,250.5", "80 km/h", ""]) == [
        "example 3: '80 km/h' is not a plain number",
        "example 4: '' is not a plain number",
    ]


def test_json_references_must_parse_follow_the_schema_and_hold_the_fields():
    schema = {"type": "object", "required": ["name"]}
    reward = {"preset": "structured_json", "metric": "schema_validity", "response_schema": schema}
    assert problems(reward, ['{"name": "Ada"}', "{name: Ada}", '{"age": 3}']) == [
        "example 2: '{name: Ada}' is not valid JSON",
        "example 3: the reference does not follow the JSON schema: 'name' is a required property",
    ]
    fields = {"preset": "structured_json", "metric": "field_match", "fields": ["name", "address.city"]}
    assert problems(fields, ['{"name": "Ada", "address": {"city": "London"}}', '{"name": "Ada"}']) == [
        "example 2: the reference has no field address.city"
    ]


def test_verifiable_references_must_hold_the_final_answer():
    assert problems(
        {"preset": "verifiable", "metric": "gsm8k"}, ["... #### 72", "72", "seventy-two", "#### ?"]
    ) == [
        "example 3: 'seventy-two' has no final number (a number, or GSM8K's \"#### 72\")",
        "example 4: '#### ?' has no final number (a number, or GSM8K's \"#### 72\")",
    ]
    boxed = {"preset": "verifiable", "metric": "boxed"}
    assert problems(boxed, ["\\boxed{42}", "42", "\\boxed{}", "\\boxed{4", " "]) == [
        "example 3: '\\\\boxed{}' has no \\boxed{...} content",
        "example 4: '\\\\boxed{4' has no \\boxed{...} content",
        "example 5: the reference is empty",
    ]


def test_any_reference_over_32000_characters_is_refused_even_for_a_custom_metric():
    custom = {"preset": "qa", "metric": f"custom.{uuid.uuid4()}"}
    assert problems(custom, ["x" * 32_000, "x" * 32_001, ""]) == [
        "example 2: the reference has 32,001 characters, over the 32,000 allowed"
    ]


def test_at_most_20_problems_are_reported_and_reading_stops_there():
    reward = {"preset": "numeric", "metric": "numeric_accuracy"}
    read = []

    def references():
        for number in range(1, 1_000):
            read.append(number)
            yield "not a number"

    found = problems(reward, references())
    assert len(found) == 20 and found[-1].startswith("example 20:")
    assert len(read) == 20


def test_examples_can_be_named_by_the_caller():
    reward = {"preset": "numeric", "metric": "numeric_accuracy"}
    names = ["training example 1", "validation example 7"]
    assert problems(reward, ["1", "x"], names=names) == ["validation example 7: 'x' is not a plain number"]


def test_the_refusal_starts_with_the_documents_words():
    message = incompatible_references_message(
        ["example 3: 'x' is not a plain number", "example 9: 'y' is not"]
    )
    assert message == (
        "Incompatible reference answers: example 3: 'x' is not a plain number; example 9: 'y' is not."
    )
    assert incompatible_references_message([f"example {n}: bad" for n in range(30)]).count("bad") == 20


def test_long_references_are_shortened_in_a_problem():
    (problem,) = problems({"preset": "numeric", "metric": "numeric_accuracy"}, ["word " * 50])
    assert problem == "example 1: 'word word word word word word word word…' is not a plain number"
