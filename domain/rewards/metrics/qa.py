"""Q&A metrics: exact match, normalized exact match (0 or 1) and token F1 (partial credit), as SQuAD does."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from domain.rewards.types import AnswerScore

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_text(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces: "The Eiffel  Tower!" → "eiffel tower"."""
    lowered = text.lower()
    without_punctuation = "".join(ch for ch in lowered if not unicodedata.category(ch).startswith("P"))
    return " ".join(_ARTICLES.sub(" ", without_punctuation).split())


def exact_match(answer: str, reference: str) -> AnswerScore:
    """1 when the answer is the reference, ignoring only surrounding whitespace."""
    return AnswerScore(1.0 if answer.strip() == reference.strip() else 0.0)


def normalized_exact_match(answer: str, reference: str) -> AnswerScore:
    return AnswerScore(1.0 if normalize_text(answer) == normalize_text(reference) else 0.0)


def token_f1(answer: str, reference: str) -> AnswerScore:
    """The harmonic mean of token precision and recall after normalisation.

    >>> token_f1("Eiffel tower, Paris", "Eiffel Tower").value
    0.8
    """
    answer_tokens = normalize_text(answer).split()
    reference_tokens = normalize_text(reference).split()
    if not answer_tokens or not reference_tokens:
        return AnswerScore(1.0 if answer_tokens == reference_tokens else 0.0)
    overlap = sum((Counter(answer_tokens) & Counter(reference_tokens)).values())
    if overlap == 0:
        return AnswerScore(0.0)
    precision = overlap / len(answer_tokens)
    recall = overlap / len(reference_tokens)
    return AnswerScore(2 * precision * recall / (precision + recall))
