"""An evaluation's Longest answer (tokens): its default and bounds, shared by evaluations and experiments."""

from __future__ import annotations

from typing import Any

MAX_ANSWER_TOKENS_DEFAULT = 64
MAX_ANSWER_TOKENS_RANGE = (1, 16_384)
ANSWER_LENGTH_MESSAGE = "Longest answer (tokens) must be a whole number from {:,} to {:,}.".format(
    *MAX_ANSWER_TOKENS_RANGE)


def is_answer_length(value: Any) -> bool:
    low, high = MAX_ANSWER_TOKENS_RANGE
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
