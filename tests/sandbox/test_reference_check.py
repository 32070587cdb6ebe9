"""Before the model loads, a run scores one reference against itself; any failure stops it, said in words."""

from __future__ import annotations

import pytest

from trainer.sandbox import SandboxLimits, try_on_reference

SHORT = SandboxLimits(batch_seconds=1.5)


def test_a_metric_that_scores_its_reference_passes() -> None:
    source = "def score(answer, reference):\n    return float(answer == reference)\n"
    assert try_on_reference(source, "The answer is 42.") is None


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (
            "def score(answer, reference)\n    return 1.0\n",
            "The metric does not compile: line 1: expected ':'.",
        ),
        (
            "def grade(answer, reference):\n    return 1.0\n",
            "The metric defines no score(answer, reference) function.",
        ),
        (
            "import no_such_module\n\ndef score(answer, reference):\n    return 1.0\n",
            "The metric failed to load: ModuleNotFoundError at line 1: No module named 'no_such_module'.",
        ),
        (
            "def score(answer, reference):\n    return int(reference)\n",
            "The metric raised ValueError at line 2 on the reference.",
        ),
        (
            "def score(answer, reference):\n    return 2.0\n",
            "The metric did not return a number from 0 to 1 for the reference.",
        ),
        (
            "def score(answer, reference):\n    return answer == reference\n",
            "The metric did not return a number from 0 to 1 for the reference.",
        ),
        (
            "def score(answer, reference):\n    while True:\n        pass\n",
            "The metric ran out of time: a batch of up to 8 answers has 1.5 seconds.",
        ),
        (
            "def score(answer, reference):\n    print(reference * 100_000)\n    return 1.0\n",
            "The metric printed more than 64 KiB.",
        ),
    ],
    ids=["no compile", "no score", "import fails", "raises", "out of range", "bool", "loops", "prints"],
)
def test_a_metric_that_fails_on_its_reference_says_why(source: str, reason: str) -> None:
    assert try_on_reference(source, "forty", limits=SHORT) == reason
