"""The built-in verifiable tasks (001): Math Pairs, GSM8K and boxed answers, with the optional format bonus.

Each answer gets parts: `correct` (the final answer is right), `format` (the answer is shaped
`<think>...</think><answer>...</answer>`) and `strict` (right, and stated on its own: the <answer> block
or the whole answer is just the final answer, or GSM8K's "#### 72"). The score is 0.9 x correct + 0.1 x
format with the format bonus, else correct alone. The final answer is read from the last <answer> block
where there is one, and from the whole text otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from domain.rewards.extract import (
    answer_region,
    final_number,
    gsm8k_marked_number,
    gsm8k_reference_number,
    has_reasoning_format,
    last_boxed,
    normalize_math,
    plain_number,
)
from domain.rewards.types import AnswerScore

CORRECT_WEIGHT = 0.9
FORMAT_WEIGHT = 0.1

# (final answer region, reference) -> (correct, strict)
Check = Callable[[str, str], tuple[bool, bool]]


def check_math_pairs(region: str, reference: str) -> tuple[bool, bool]:
    expected = gsm8k_reference_number(reference)
    if expected is None:
        return False, False
    return final_number(region) == expected, plain_number(region) == expected


def check_gsm8k(region: str, reference: str) -> tuple[bool, bool]:
    expected = gsm8k_reference_number(reference)
    if expected is None:
        return False, False
    stated = gsm8k_marked_number(region)
    strict = stated == expected or plain_number(region) == expected
    return final_number(region) == expected, strict


def boxed_ground_truth(reference: str) -> str:
    """A ground truth may itself be written `\\boxed{...}`; its content is what answers must match."""
    boxed = last_boxed(reference)
    return normalize_math(boxed if boxed is not None else reference)


def check_boxed(region: str, reference: str) -> tuple[bool, bool]:
    given = last_boxed(region)
    correct = given is not None and normalize_math(given) == boxed_ground_truth(reference)
    return correct, correct


CHECKS: dict[str, Check] = {"math_pairs": check_math_pairs, "gsm8k": check_gsm8k, "boxed": check_boxed}


@dataclass(frozen=True)
class VerifiableTask:
    check: Check
    format_bonus: bool = True

    def __call__(self, answer: str, reference: str) -> AnswerScore:
        correct, strict = self.check(answer_region(answer), reference)
        shaped = has_reasoning_format(answer)
        correct_part, format_part = float(correct), float(shaped)
        value = (
            CORRECT_WEIGHT * correct_part + FORMAT_WEIGHT * format_part if self.format_bonus else correct_part
        )
        return AnswerScore(
            value=min(1.0, value),
            parts={"correct": correct_part, "format": format_part, "strict": float(strict)},
        )
