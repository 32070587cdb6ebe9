"""A custom metric is checked before anything runs it: it must compile and define score(answer, reference)."""

from __future__ import annotations

import pytest

from domain.rewards import custom
from domain.rewards.custom import MetricSourceInvalid, check_metric_source, score_from_result


@pytest.mark.parametrize(
    "source",
    [
        "def score(answer, reference):\n    return float(answer.strip() == reference.strip())\n",
        "import re\n\ndef score(answer, reference, *, strict=False):\n    return 1.0\n",
        "def score(answer, reference, weight=1.0):\n    return weight\n",
        "def score(*args):\n    return 0.5\n",
        "score = lambda answer, reference: 1.0\n",
    ],
)
def test_a_metric_with_a_score_function_passes(source):
    check_metric_source(source)


def test_a_metric_that_does_not_compile_is_refused_with_the_line():
    with pytest.raises(MetricSourceInvalid) as caught:
        check_metric_source("def score(answer, reference):\n    x = 1\n    return (\n")
    assert caught.value.reason.startswith("The metric does not compile: line 3: ")
    with pytest.raises(MetricSourceInvalid) as caught:
        check_metric_source("def score(answer, reference):\n    return 1 +\n")
    assert caught.value.reason == "The metric does not compile: line 2: invalid syntax."


@pytest.mark.parametrize(
    "source",
    [
        "",
        "def grade(answer, reference):\n    return 1.0\n",
        "def score(answer):\n    return 1.0\n",
        "def score(answer, reference, extra):\n    return 1.0\n",
        "def score(answer, reference, *, mode):\n    return 1.0\n",
        "async def score(answer, reference):\n    return 1.0\n",
        "class Metric:\n    def score(self, answer, reference):\n        return 1.0\n",
        "def score(answer, reference):\n    return 1.0\nscore = None\n",
    ],
)
def test_a_metric_without_score_answer_reference_is_refused(source):
    with pytest.raises(MetricSourceInvalid) as caught:
        check_metric_source(source)
    assert caught.value.reason == "The metric defines no score(answer, reference) function."


def test_the_sandbox_limits_are_the_products():
    assert custom.BATCH_SIZE == 8
    assert custom.BATCH_SECONDS == 30
    assert custom.BATCH_MEMORY_BYTES == 512 * 1024 * 1024
    assert custom.OUTPUT_BYTES == 64 * 1024
    assert custom.REFERENCE_CHARACTERS == 32_000


@pytest.mark.parametrize(("result", "value"), [(0, 0.0), (1, 1.0), (0.25, 0.25)])
def test_a_number_from_0_to_1_is_a_score(result, value):
    assert score_from_result(result) == custom.AnswerScore(value)


@pytest.mark.parametrize("result", [True, 1.5, -0.1, float("nan"), "0.5", None])
def test_anything_else_is_a_result_failure(result):
    assert score_from_result(result).failure == "result"
