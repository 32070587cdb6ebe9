"""A custom metric scores answers through the sandbox, and each bad result fails only its own answer."""

from __future__ import annotations

import math
import re

import pytest

from domain.rewards.types import AnswerScore
from trainer.sandbox import SandboxedMetric, SandboxError

EXACT_MATCH = "def score(answer, reference):\n    return float(answer.strip() == reference.strip())\n"

# A thinking model writes its reasoning before the answer; the metric scores only what follows </think>.
FINAL_ANSWER_AFTER_THINKING = """
import re

def score(answer, reference):
    final = answer.rsplit("</think>", 1)[-1]
    match = re.search(r"<answer>(.*?)</answer>", final, re.S)
    final = match.group(1) if match else final
    return float(final.strip() == reference.strip())
"""


def test_a_round_of_answers_is_scored_in_order_at_the_default_limits() -> None:
    answers = [str(number % 5) for number in range(20)]  # 20 answers: batches of 8, 8 and 4
    references = ["3"] * 20
    with SandboxedMetric(EXACT_MATCH, name="exact (v2)") as metric:
        scores = metric.score_batch(answers, references)
        assert metric.label == "exact (v2)"
    assert scores == [AnswerScore(value=1.0 if answer == "3" else 0.0) for answer in answers]
    assert sum(score.value for score in scores) == 4


def test_a_metric_can_read_the_final_answer_out_of_a_thinking_models_reasoning() -> None:
    answers = [
        "<think>Maybe 12? No: 7 + 5 = 12, then 12 * 2 = 24.</think><answer>24</answer>",
        "<think>Surely 24 is wrong.</think> 25",
        "24",
        "",
    ]
    with SandboxedMetric(FINAL_ANSWER_AFTER_THINKING) as metric:
        scores = metric.score_batch(answers, ["24"] * 4)
    assert [score.value for score in scores] == [1.0, 0.0, 1.0, 0.0]
    assert all(score.failure is None for score in scores)


# Partial credit from the standard library: the worker has it imported before the metric runs.
CLOSENESS = """
import difflib, unicodedata

def score(answer, reference):
    def clean(text):
        return unicodedata.normalize("NFKC", text).casefold().split()
    return difflib.SequenceMatcher(None, clean(answer), clean(reference)).ratio()
"""


def test_a_metric_can_give_partial_credit_with_the_standard_library() -> None:
    with SandboxedMetric(CLOSENESS) as metric:
        scores = metric.score_batch(["The Eiffel Tower", "the tower", "Big Ben", ""], ["the Eiffel tower"] * 4)
    assert [round(score.value, 2) for score in scores] == [1.0, 0.8, 0.0, 0.0]


def test_a_result_that_is_not_a_number_from_0_to_1_fails_only_that_answer(hostile_metric) -> None:
    answers = ["nan", "two", "negative", "text", "nothing", "true", "42", "41"]
    scores = hostile_metric.score_batch(answers, ["42"] * 8)
    assert [score.failure for score in scores] == ["result"] * 6 + [None, None]
    assert [score.value for score in scores] == [0.0] * 6 + [1.0, 0.0]
    assert not any(math.isnan(score.value) for score in scores)


def test_a_metric_that_raises_fails_only_that_answer_with_execution(hostile_metric) -> None:
    graded = hostile_metric.grade(["raise", "42", "exit", "42"], ["42"] * 4)
    assert [g.score for g in graded] == [
        AnswerScore.failed("execution"),
        AnswerScore(value=1.0),
        AnswerScore.failed("execution"),
        AnswerScore(value=1.0),
    ]
    assert re.fullmatch(r"KeyError at line \d+: '42'", graded[0].detail)


def test_a_metric_that_ends_its_process_fails_its_batch_and_no_other(hostile_metric) -> None:
    scores = hostile_metric.score_batch(["hard_exit"] + ["42"] * 15, ["42"] * 16)
    assert scores[:8] == [AnswerScore.failed("execution")] * 8
    assert scores[8:] == [AnswerScore(value=1.0)] * 8


def test_each_batch_starts_from_the_metric_as_written() -> None:
    counting = "calls = []\ndef score(answer, reference):\n    calls.append(1)\n    return len(calls) / 8\n"
    with SandboxedMetric(counting) as metric:
        scores = metric.score_batch(["a"] * 16, ["a"] * 16)
    assert [score.value for score in scores[:8]] == [score.value for score in scores[8:]]
    assert scores[7].value == 1.0


def test_an_empty_list_needs_no_process_and_mismatched_lengths_are_refused(hostile_metric) -> None:
    assert hostile_metric.score_batch([], []) == []
    with pytest.raises(ValueError, match="1 answers but 0 references"):
        hostile_metric.score_batch(["a"], [])


def test_a_dead_sandbox_is_an_error_of_its_own_not_a_metric_failure(hostile_metric) -> None:
    hostile_metric._process.kill()  # as if the machine had ended the worker
    with pytest.raises(SandboxError, match="the metric sandbox stopped"):
        hostile_metric.score_batch(["42"], ["42"])
    hostile_metric.close()
    with pytest.raises(SandboxError, match="the metric sandbox is closed"):
        hostile_metric.score_batch(["42"], ["42"])


class _CharacterTokenizer:
    """Token ids that are character codes: enough for score_answers to read answers as text."""

    def decode(self, token_ids, skip_special_tokens: bool = True) -> str:
        return "".join(chr(i) for i in token_ids)


def test_the_sandbox_counts_its_batches_by_outcome_and_a_round_takes_its_own_share(hostile_metric) -> None:
    from trainer.sampling import SampledAnswer
    from trainer.scoring import score_answers

    # batches of 8: all right; one answer raises; one answer's result is not a number; the process ends; all right
    answers = ["42"] * 8 + ["42", "raise"] + ["42"] * 6 + ["two"] + ["42"] * 7 + ["hard_exit"] + ["42"] * 7
    answers += ["42"] * 3
    hostile_metric.score_batch(answers, ["42"] * len(answers))
    assert hostile_metric.batch_outcomes == {"scored": 2, "execution": 2, "result": 1}

    # a round's answers graded by the same sandbox: the round holds its own batches, not the sandbox's total
    texts = ["42", "raise", "42", "two", "42", "42", "raise", "42", "42"]  # one batch of 8 and one of 1
    group = [SampledAnswer([ord(c) for c in text], cut_off=False) for text in texts]
    scored = score_answers(_CharacterTokenizer(), hostile_metric, [group], ["42"])
    assert scored.sandbox_batches == {"execution": 1, "scored": 1}
    assert scored.failures_by_kind == {"execution": 2, "result": 1}
    assert hostile_metric.batch_outcomes == {"scored": 3, "execution": 3, "result": 1}

    class BuiltIn:  # a built-in reward runs no sandbox
        label = "exact"

        def score_batch(self, answers, references):
            return [AnswerScore(float(a == r)) for a, r in zip(answers, references, strict=True)]

    assert score_answers(_CharacterTokenizer(), BuiltIn(), [group], ["42"]).sandbox_batches is None
