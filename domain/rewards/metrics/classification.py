"""Classification: accuracy of a label answer against the reference label."""

from __future__ import annotations

from domain.rewards.types import AnswerScore

# Quotes and end punctuation a model often wraps a label in; they don't change which label it chose.
_WRAPPING = " \t\r\n\"'`.!*"


def normalize_label(text: str) -> str:
    """How labels compare: case-insensitively, without surrounding quotes, stars or a full stop."""
    return text.strip(_WRAPPING).casefold()


def accuracy(answer: str, reference: str) -> AnswerScore:
    """1 when the answer is the reference label: "Positive." and "positive" both answer "positive"."""
    return AnswerScore(1.0 if normalize_label(answer) == normalize_label(reference) else 0.0)
