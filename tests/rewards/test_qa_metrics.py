"""Q&A rewards: exact match gives 0 or 1, normalized exact match forgives case and punctuation, token F1 gives
partial credit so a nearly right answer scores between 0 and 1."""

from __future__ import annotations

import pytest

EXACT = {"preset": "qa", "metric": "exact_match"}
NORMALIZED = {"preset": "qa", "metric": "normalized_exact_match"}
F1 = {"preset": "qa", "metric": "token_f1"}


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [("Paris", "Paris", 1.0), ("  Paris\n", "Paris", 1.0), ("paris", "Paris", 0.0), ("Paris.", "Paris", 0.0)],
)
def test_exact_match_ignores_only_surrounding_whitespace(score_with, answer, reference, expected):
    assert score_with(EXACT, answer, reference).value == expected


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower", 1.0),
        ("an apple", "Apple.", 1.0),
        ("Eiffel  Tower, Paris", "Eiffel Tower", 0.0),
        ("« Paris »", "Paris", 1.0),
    ],
)
def test_normalized_exact_match_scores_0_or_1_after_normalising(score_with, answer, reference, expected):
    assert score_with(NORMALIZED, answer, reference).value == expected


def test_token_f1_gives_partial_credit(score_with):
    # 2 of 5 answer tokens are right (precision 0.4), both reference tokens found (recall 1): F1 = 0.8/1.4.
    assert score_with(F1, "the Eiffel tower in Paris France", "Eiffel Tower").value == pytest.approx(
        0.8 / 1.4
    )
    assert score_with(F1, "Eiffel Tower", "the Eiffel Tower").value == 1.0
    assert score_with(F1, "Louvre", "Eiffel Tower").value == 0.0


def test_token_f1_counts_repeated_tokens_once_each(score_with):
    # "tower tower" shares one "tower" with the reference: precision 1/2, recall 1/2.
    assert score_with(F1, "tower tower", "eiffel tower").value == pytest.approx(0.5)


def test_an_empty_answer_scores_0_unless_the_reference_is_empty_too(score_with):
    assert score_with(F1, "", "Paris").value == 0.0
    assert score_with(F1, "  ", "The").value == 1.0  # both normalise to nothing
    assert score_with(NORMALIZED, "", "Paris").value == 0.0
