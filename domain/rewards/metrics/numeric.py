"""Numeric accuracy: the whole answer is a plain number within the tolerances of the reference number.

Built-in metrics score the whole text (000): "80" scores 1 against 80, "The speed is 80 km/h" scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from domain.rewards.extract import plain_number
from domain.rewards.types import AnswerScore


@dataclass(frozen=True)
class NumericAccuracy:
    absolute_tolerance: float = 0.0
    relative_tolerance: float = 0.0

    def __call__(self, answer: str, reference: str) -> AnswerScore:
        given, expected = plain_number(answer), plain_number(reference)
        if given is None or expected is None:
            return AnswerScore(0.0)
        return AnswerScore(1.0 if self.close(given, expected) else 0.0)

    def close(self, given: Decimal, expected: Decimal) -> bool:
        """|given - expected| <= max(absolute tolerance, relative tolerance x |expected|)."""
        allowed = max(
            Decimal(str(self.absolute_tolerance)), Decimal(str(self.relative_tolerance)) * abs(expected)
        )
        return abs(given - expected) <= allowed
