"""Reading the final answer out of a model's text: numbers, GSM8K's "####", the last balanced \\boxed{...},
and the <think>/<answer> shape. The modules' own docstring examples run here too."""

from __future__ import annotations

import doctest
import importlib
from decimal import Decimal

import pytest

from domain.rewards import extract


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("so 12 + 60 = 72.", Decimal(72)),
        ("It costs $1,200.50 in all", Decimal("1200.50")),
        ("10-3 leaves 7", Decimal(7)),
        ("the change is -4 degrees", Decimal(-4)),
        ("half is .5", Decimal("0.5")),
        ("version2 has no number", None),
        ("", None),
    ],
)
def test_the_final_number_of_a_text(text, number):
    assert extract.final_number(text) == number


@pytest.mark.parametrize(
    ("text", "number"),
    [(" 80 ", Decimal(80)), ("-1,250.5", Decimal("-1250.5")), ("1e3", Decimal(1000)), ("80.", Decimal(80)),
     ("80 km/h", None), ("1,25", None), ("nan", None), ("inf", None), ("", None)],
)  # fmt: skip
def test_a_plain_number_is_the_whole_text(text, number):
    assert extract.plain_number(text) == number


def test_gsm8k_numbers():
    assert extract.gsm8k_reference_number("48/2 = 24\n#### 72") == 72
    assert extract.gsm8k_reference_number("#### $1,000") == 1000
    assert extract.gsm8k_reference_number("72") == 72
    assert extract.gsm8k_reference_number("about 72") is None
    assert extract.gsm8k_marked_number("work...\n#### 72.\nDone") == 72
    assert extract.gsm8k_marked_number("no mark, 72") is None


def test_the_last_boxed_content_with_balanced_braces():
    assert extract.last_boxed("\\boxed{\\frac{1}{2}} and later \\boxed{ {3} }") == " {3} "
    assert extract.last_boxed("\\fbox{7}") == "7"
    assert extract.last_boxed("\\boxed{1} then \\boxed{2") == "1"
    assert extract.last_boxed("no box") is None


def test_normalised_math_answers():
    assert extract.normalize_math("\\dfrac12") == extract.normalize_math("\\frac{1}{2}")
    assert extract.normalize_math(" 1,000.50 ") == "1000.5"
    assert extract.normalize_math("x = \\text{5}") == "5"
    assert extract.normalize_math("90^\\circ") == "90"
    assert extract.normalize_math("-0.0") == "0"
    assert extract.normalize_math("\\sqrt2") == "\\sqrt{2}"
    assert extract.normalize_math(".5x") == "0.5x"


def test_the_reasoning_shape_and_where_the_answer_is_read():
    assert extract.has_reasoning_format("<think>a\nb</think>\n<answer>c</answer>")
    assert not extract.has_reasoning_format("<think>a</think>")
    assert extract.answer_region("<answer>1</answer> and <answer>2</answer>") == "2"
    assert extract.answer_region("just 3") == "just 3"


@pytest.mark.parametrize(
    "module",
    ["domain.rewards.extract", "domain.rewards.metrics.qa", "domain.rewards.breakdown",
     "domain.rewards.math_pairs", "domain.datasets.upload", "domain.datasets.tally"],
)  # fmt: skip
def test_docstring_examples_hold(module):
    results = doctest.testmod(importlib.import_module(module))
    assert results.failed == 0 and results.attempted > 0
