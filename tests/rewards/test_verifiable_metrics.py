"""The built-in verifiable tasks (001): the final answer is right or not, and the format bonus adds 0.1 for an
answer shaped <think>...</think><answer>...</answer>, so scores are 1, 0.9, 0.1 or 0."""

from __future__ import annotations

import pytest

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}
GSM8K = {"preset": "verifiable", "metric": "gsm8k"}
BOXED = {"preset": "verifiable", "metric": "boxed"}
SHAPED = "<think>29 and 60 make 89.</think>\n<answer>89</answer>"


@pytest.mark.parametrize(
    ("answer", "value", "parts"),
    [
        (SHAPED, 1.0, {"correct": 1.0, "format": 1.0, "strict": 1.0}),
        ("89", 0.9, {"correct": 1.0, "format": 0.0, "strict": 1.0}),
        ("29+60 = 89", 0.9, {"correct": 1.0, "format": 0.0, "strict": 0.0}),
        ("<think>about 90</think><answer>90</answer>", 0.1, {"correct": 0.0, "format": 1.0, "strict": 0.0}),
        ("I don't know", 0.0, {"correct": 0.0, "format": 0.0, "strict": 0.0}),
        ("", 0.0, {"correct": 0.0, "format": 0.0, "strict": 0.0}),
    ],
)
def test_math_pairs_with_the_format_bonus(score_with, answer, value, parts):
    scored = score_with(MATH_PAIRS, answer, "89")
    assert scored.value == pytest.approx(value)
    assert scored.parts == parts
    assert scored.failure is None


def test_without_the_bonus_only_correctness_counts(score_with):
    reward = {**MATH_PAIRS, "format_bonus": False}
    assert score_with(reward, SHAPED, "89").value == 1.0
    assert score_with(reward, "89", "89").value == 1.0
    shaped_but_wrong = score_with(reward, "<think>x</think><answer>90</answer>", "89")
    assert shaped_but_wrong.value == 0.0
    assert shaped_but_wrong.parts["format"] == 1.0  # still reported, for the evaluation's breakdown


def test_the_answer_block_is_where_the_final_answer_is_read(score_with):
    # The <answer> block holds 89, though a later number follows it: the block wins.
    assert score_with(MATH_PAIRS, "<answer>89</answer> (checked twice)", "89").parts["correct"] == 1.0
    # Without a block, the final number of the whole text is the answer.
    assert score_with(MATH_PAIRS, "89? No, 90", "89").parts["correct"] == 0.0


def test_the_format_needs_think_then_answer_and_nothing_around_them(score_with):
    assert score_with(MATH_PAIRS, "  " + SHAPED + "\n", "89").parts["format"] == 1.0
    assert score_with(MATH_PAIRS, "<answer>89</answer>", "89").parts["format"] == 0.0
    assert score_with(MATH_PAIRS, "<answer>89</answer><think>x</think>", "89").parts["format"] == 0.0
    assert score_with(MATH_PAIRS, SHAPED + " Hope that helps!", "89").parts["format"] == 0.0


@pytest.mark.parametrize(
    ("answer", "correct", "strict"),
    [
        ("Natalia sold 48/2 = 24 clips in May.\nAltogether 48+24 = 72 clips.\n#### 72", 1.0, 1.0),
        ("She sold 72 clips in all.", 1.0, 0.0),
        ("72", 1.0, 1.0),
        ("72.00", 1.0, 1.0),
        ("$72.", 1.0, 0.0),
        ("#### 72\nActually it is 71", 0.0, 1.0),
        ("48+24 = 71", 0.0, 0.0),
    ],
)
def test_gsm8k_rewards_the_final_number(score_with, answer, correct, strict):
    reference = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72"
    scored = score_with({**GSM8K, "format_bonus": False}, answer, reference)
    assert (scored.parts["correct"], scored.parts["strict"]) == (correct, strict)
    assert scored.value == correct


def test_gsm8k_accepts_a_bare_number_reference_and_thousands(score_with):
    assert score_with(GSM8K, "The total is 1,200 dollars", "1200").parts["correct"] == 1.0
    assert score_with(GSM8K, "The total is 1200", "... #### 1,200").parts["correct"] == 1.0
    assert score_with(GSM8K, "10-3 = 7", "7").parts["correct"] == 1.0  # a subtraction, not -3
    assert score_with(GSM8K, "It dropped to -7", "-7").parts["correct"] == 1.0


@pytest.mark.parametrize(
    ("answer", "ground_truth", "correct"),
    [
        ("So the answer is \\boxed{42}.", "42", 1.0),
        ("\\boxed{41} then \\boxed{42}", "42", 1.0),
        ("\\boxed{\\frac{1}{2}}", "\\dfrac12", 1.0),
        ("\\boxed{\\left( 3, 4 \\right)}", "(3,4)", 1.0),
        ("\\boxed{x = 5}", "5", 1.0),
        ("\\boxed{5\\%}", "5", 1.0),
        ("\\boxed{1,000}", "1000", 1.0),
        ("\\boxed{0.50}", "\\boxed{.5}", 1.0),
        ("\\boxed{\\text{Tuesday}}", "Tuesday", 1.0),
        ("The answer is 42.", "42", 0.0),
        ("\\boxed{42", "42", 0.0),
        ("\\boxed{43}", "42", 0.0),
        ("\\boxed{{a}+{b}}", "{a}+{b}", 1.0),
    ],
)
def test_boxed_reads_the_last_balanced_box(score_with, answer, ground_truth, correct):
    scored = score_with({**BOXED, "format_bonus": False}, answer, ground_truth)
    assert scored.parts["correct"] == correct
    assert scored.value == correct


def test_boxed_with_the_format_bonus_reads_the_box_in_the_answer_block(score_with):
    answer = "<think>maybe \\boxed{41}</think><answer>\\boxed{42}</answer>"
    assert score_with(BOXED, answer, "42").value == pytest.approx(1.0)
