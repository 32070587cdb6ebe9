"""In an evaluation a custom metric that fails on an answer fails that answer's whole batch of up to 8, and the
evaluation says how many answers failed and why, in words that quote no answer."""

from __future__ import annotations

import pytest

from domain.rewards.batch_failures import MetricFailures, error_words, fail_whole_batches
from domain.rewards.types import AnswerScore

RIGHT, WRONG = AnswerScore(1.0), AnswerScore(0.0)


def test_one_answer_that_raises_fails_every_answer_of_its_batch_and_no_other():
    scores = [RIGHT] * 8 + [RIGHT, AnswerScore.failed("execution")] + [WRONG] * 6 + [RIGHT] * 4
    details = [""] * 9 + ["KeyError at line 4: 'the model wrote this'"] + [""] * 10

    judged, failures = fail_whole_batches(scores, details)

    assert [s.score.value for s in judged] == [1.0] * 8 + [0.0] * 8 + [1.0] * 4
    assert [s.score.failure for s in judged[8:16]] == ["execution"] * 8
    assert all(s.score.failure is None and s.error is None for s in judged[:8] + judged[16:])
    assert judged[9].error == "KeyError at line 4: 'the model wrote this'"  # its own error, for the results
    assert judged[8].error == "Another answer of batch 2 failed: KeyError at line 4"
    assert (failures.failed, failures.graded, failures.every_answer) == (8, 20, False)
    assert failures.note() == (
        "The custom metric failed on 8 of 20 answers (batch 2: KeyError at line 4). Those answers score 0; make "
        "the metric handle any text."
    )
    assert "the model wrote this" not in failures.note()


def test_a_result_that_is_not_a_number_from_0_to_1_fails_its_batch_in_words_that_quote_no_answer():
    judged, failures = fail_whole_batches([AnswerScore.failed("result"), RIGHT], ["'the answer itself'", ""])
    assert judged[0].error == "returned something that is not a number from 0 to 1: 'the answer itself'"
    assert failures.note() == (
        "The custom metric failed on all 2 answers (batch 1: returned something that is not a number from 0 to 1), "
        "so the evaluation has no score. Make the metric handle any text."
    )


def test_batches_that_fail_alike_are_named_together_and_the_list_stays_short():
    scores, details = [], []
    for batch in range(1, 13):
        failing = batch % 2 == 0 or batch in (3, 5)
        scores += [AnswerScore.failed("timeout" if batch == 3 else "execution") if failing else RIGHT] * 8
        detail = "ran past 30 seconds" if batch == 3 else f"ValueError at line {batch if batch == 5 else 2}: x"
        details += [detail if failing else ""] * 8
    scores.append(AnswerScore.failed("output"))
    details.append("printed more than 65536 bytes")

    _, failures = fail_whole_batches(scores, details)

    assert failures.note() == (
        "The custom metric failed on 65 of 97 answers (batches 2, 4, 6, 8, 10 and 1 more: ValueError at line 2; "
        "batch 3: ran past 30 seconds; batch 5: ValueError at line 5; 1 more batch with other errors). Those "
        "answers score 0; make the metric handle any text."
    )


def test_a_metric_that_does_not_load_says_why_without_its_message():
    assert error_words("execution", "the metric failed to load: NameError at line 2: name 'x' is not defined") == (
        "the metric failed to load (NameError at line 2)"
    )
    assert error_words("memory", "MemoryError") == "MemoryError"
    assert error_words("execution", "") == "raised an error"


def test_no_failure_leaves_every_score_as_the_metric_gave_it():
    judged, failures = fail_whole_batches([RIGHT, WRONG, AnswerScore(0.5, parts={"correct": 1.0})], ["", "", ""])
    assert [s.score for s in judged] == [RIGHT, WRONG, AnswerScore(0.5, parts={"correct": 1.0})]
    assert (failures.failed, failures.graded, failures.batches) == (0, 3, ())


def test_the_summary_reads_back_and_refuses_counts_that_do_not_add_up():
    _, failures = fail_whole_batches([AnswerScore.failed("execution"), RIGHT, RIGHT], ["KeyError at line 1", "", ""],
                                     batch_size=1)
    assert MetricFailures.from_dict(failures.to_dict()) == failures
    with pytest.raises(ValueError, match="do not add up"):
        MetricFailures.from_dict({"failed": 9, "graded": 8, "batches": []})
    with pytest.raises(ValueError):
        MetricFailures.from_dict({"failed": 1, "graded": 8, "batches": [{"batch": 1, "kind": "bogus", "error": ""}]})
