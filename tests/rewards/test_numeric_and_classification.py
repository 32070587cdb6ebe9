"""Numeric accuracy reads the whole answer as a plain number (000's train-speed example: "80" scores 1, a
sentence around it scores 0), within the absolute or relative tolerance. Classification compares labels."""

from __future__ import annotations

import pytest

NUMERIC = {"preset": "numeric", "metric": "numeric_accuracy"}
LABELS = {"preset": "classification", "metric": "accuracy", "labels": ["positive", "negative", "neutral"]}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("80", 1.0),
        (" 80\n", 1.0),
        ("80.0", 1.0),
        ("+80", 1.0),
        ("8e1", 1.0),
        ("80 km/h", 0.0),
        ("The speed is 80", 0.0),
        ("81", 0.0),
        ("", 0.0),
        ("eighty", 0.0),
    ],
)
def test_the_bare_number_scores_and_a_sentence_does_not(score_with, answer, expected):
    assert score_with(NUMERIC, answer, "80").value == expected


def test_thousands_commas_and_negative_numbers_are_numbers(score_with):
    assert score_with(NUMERIC, "1,250.5", "1250.50").value == 1.0
    assert score_with(NUMERIC, "-3", "-3.0").value == 1.0
    assert score_with(NUMERIC, "12,50", "1250").value == 0.0


def test_absolute_tolerance_allows_a_fixed_distance(score_with):
    reward = {**NUMERIC, "absolute_tolerance": 0.5}
    assert score_with(reward, "80.5", "80").value == 1.0
    assert score_with(reward, "79.4", "80").value == 0.0


def test_relative_tolerance_scales_with_the_reference(score_with):
    reward = {**NUMERIC, "relative_tolerance": 0.01}
    assert score_with(reward, "1010", "1000").value == 1.0
    assert score_with(reward, "1011", "1000").value == 0.0
    assert score_with(reward, "-0.99", "-1").value == 1.0


def test_the_larger_tolerance_wins(score_with):
    reward = {**NUMERIC, "absolute_tolerance": 2, "relative_tolerance": 0.01}
    assert score_with(reward, "12", "10").value == 1.0  # 2 away: the absolute tolerance allows it
    assert score_with(reward, "1009", "1000").value == 1.0  # 9 away: the relative one does


def test_a_reference_that_is_not_a_number_scores_every_answer_0(score_with):
    assert score_with(NUMERIC, "80", "about 80").value == 0.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("positive", 1.0),
        ("Positive.", 1.0),
        ('"POSITIVE"', 1.0),
        ("**positive**", 1.0),
        ("negative", 0.0),
        ("positive, mostly", 0.0),
        ("", 0.0),
    ],
)
def test_classification_accuracy_compares_labels_case_insensitively(score_with, answer, expected):
    assert score_with(LABELS, answer, "positive").value == expected
