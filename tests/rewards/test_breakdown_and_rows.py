"""An evaluation's Score Breakdown (001), and the rows of the built-in verifiable tasks."""

from __future__ import annotations

import pytest

from domain.rewards.breakdown import breakdown
from domain.rewards.config import RewardConfig
from domain.rewards.math_pairs import math_pairs_problem
from domain.rewards.registry import build_grader
from domain.rewards.types import AnswerScore
from domain.rewards.verifiable import RowsInvalid, boxed_rows, gsm8k_rows, math_pairs_rows


def test_the_breakdown_of_a_math_pairs_evaluation():
    grader = build_grader(RewardConfig.from_dict({"preset": "verifiable", "metric": "math_pairs"}))
    answers = ["<think>9+9</think><answer>18</answer>", "18", "it is 18", "17", "", "<think>long"]
    cut_off = [False, False, False, False, False, True]
    scores = grader.score_batch(answers, ["18"] * 6)
    assert breakdown(scores, answers, cut_off) == pytest.approx(
        {
            "score": (1 + 0.9 + 0.9) / 6,
            "accuracy": 3 / 6,
            "accuracy_strict": 2 / 6,
            "format": 1 / 6,
            "answered": 4 / 6,
        }
    )


def test_a_cut_off_answer_counts_0_even_when_its_parts_say_otherwise():
    right = AnswerScore(1.0, parts={"correct": 1.0, "format": 1.0, "strict": 1.0})
    assert breakdown([right, right], ["18", "18"], [True, False]) == {
        "score": 0.5,
        "accuracy": 0.5,
        "accuracy_strict": 0.5,
        "format": 0.5,
        "answered": 0.5,
    }


def test_a_reward_without_parts_breaks_down_into_accuracy_and_answered():
    scores = [AnswerScore(0.5), AnswerScore(1.0)]
    assert breakdown(scores, ["a b", "a"], [False, False]) == {
        "score": 0.75,
        "accuracy": 0.75,
        "answered": 1.0,
    }
    assert breakdown([], [], []) == {"score": 0.0, "accuracy": 0.0, "answered": 0.0}
    with pytest.raises(ValueError):
        breakdown(scores, ["a"], [False, False])


def test_math_pairs_rows_are_the_same_for_the_same_seed_and_differ_for_another():
    training, validation = math_pairs_rows(seed=7, count=256)
    assert (training, validation) == math_pairs_rows(seed=7, count=256)
    assert math_pairs_rows(seed=8, count=256)[0] != training
    assert len(training) == 256 and len(validation) == 128


def test_math_pairs_validation_questions_differ_and_are_never_trained_on():
    training, validation = math_pairs_rows(seed=3, count=5_000, validation_count=100)
    validation_questions = [row["prompt"][0]["content"] for row in validation]
    assert len(set(validation_questions)) == 100
    assert not set(validation_questions) & {row["prompt"][0]["content"] for row in training}


@pytest.mark.parametrize("seed", [0, 1, 2, 41])
def test_no_math_pairs_row_is_a_held_out_benchmark_problem_whatever_the_seed_or_count(seed):
    # A training loop gives each round the next seed: its rounds must still never train on the benchmark.
    from domain.evaluations.benchmarks import math_pairs_held_out_rows

    held_out = {row["prompt"][0]["content"] for row in math_pairs_held_out_rows(1000)}
    assert len(held_out) == 1000
    training, validation = math_pairs_rows(seed=seed, count=4_000)
    assert not held_out & {row["prompt"][0]["content"] for row in (*training, *validation)}


def test_the_held_out_benchmark_has_a_thousand_problems():
    from domain.evaluations.benchmarks import math_pairs_held_out_rows

    assert math_pairs_held_out_rows(3) == math_pairs_held_out_rows(1000)[:3]
    with pytest.raises(ValueError, match="1,000 problems"):
        math_pairs_held_out_rows(1001)


def test_math_pairs_rows_are_math_pairs_problems_in_the_trainers_shape():
    training, _ = math_pairs_rows(seed=1, count=50, validation_count=8)
    for row in training:
        (message,) = row["prompt"]
        assert message["role"] == "user"
        a, op, b = message["content"].removeprefix("What is ").removesuffix("?").partition("+")
        if not op:
            a, _, b = message["content"].removeprefix("What is ").removesuffix("?").partition("*")
            assert row["reference"] == str(int(a) * int(b))
        else:
            assert row["reference"] == str(int(a) + int(b))
    import random

    assert math_pairs_problem(random.Random(7)) == (
        "What is 29+60?",
        "89",
    )  # the tiny model's task is unchanged


def test_gsm8k_rows_come_from_its_own_records_or_a_versions_rows():
    records = [
        {"question": "Natalia sold 48 clips...", "answer": "48/2 = 24\n#### 72"},
        {"prompt": [{"role": "user", "content": "How many?"}], "reference": "5"},
    ]
    assert gsm8k_rows(records) == [
        {
            "prompt": [{"role": "user", "content": "Natalia sold 48 clips..."}],
            "reference": "48/2 = 24\n#### 72",
        },
        {"prompt": [{"role": "user", "content": "How many?"}], "reference": "5"},
    ]
    with pytest.raises(RowsInvalid, match=r"Record 2: the answer has no final number"):
        gsm8k_rows([records[0], {"question": "q", "answer": "many"}])
    with pytest.raises(RowsInvalid, match=r'Record 1: it needs a "question"'):
        gsm8k_rows([{"answer": "5"}])


def test_boxed_rows_take_a_prompt_as_text_or_messages_and_a_ground_truth():
    records = [
        {"prompt": "Solve x+1=3.", "ground_truth": "2"},
        {
            "prompt": [{"role": "system", "content": "Box it."}, {"role": "user", "content": "1+1?"}],
            "ground_truth": "\\boxed{2}",
        },
    ]
    rows = boxed_rows(records)
    assert rows[0] == {"prompt": [{"role": "user", "content": "Solve x+1=3."}], "reference": "2"}
    assert [m["role"] for m in rows[1]["prompt"]] == ["system", "user"]
    with pytest.raises(RowsInvalid, match=r'Record 1: it needs a text "ground_truth"'):
        boxed_rows([{"prompt": "x"}])
    with pytest.raises(RowsInvalid, match=r"Record 1: .* has no \\boxed"):
        boxed_rows([{"prompt": "x", "ground_truth": "\\boxed{}"}])
