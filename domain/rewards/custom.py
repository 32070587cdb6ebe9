"""Custom metrics: the checks that need no sandbox, and the limits the trainer's sandbox enforces.

A custom metric is an organization's Python file defining `score(answer, reference)` that returns a number
from 0 to 1. Here it is only compiled and inspected, never run: running it is the sandbox's job.
"""

from __future__ import annotations

import ast
import math

from domain.rewards.types import AnswerScore

# PRODUCT.md's limits for a custom reward.
BATCH_SIZE = 8  # answers scored by one call of the sandbox
BATCH_SECONDS = 30
BATCH_MEMORY_BYTES = 512 * 1024 * 1024
OUTPUT_BYTES = 64 * 1024  # what the metric may print, per batch
REFERENCE_CHARACTERS = 32_000
# A round whose graded answers fail more often than this stops the run (000: "more than a tenth").
FAILURE_SHARE_THAT_STOPS = 0.1

SCORE_FUNCTION = "score"


class MetricSourceInvalid(ValueError):
    """A metric that can't run at all; `reason` is the user-facing words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_metric_source(source: str) -> None:
    """Raise MetricSourceInvalid unless the source compiles and defines score(answer, reference).

    A top-level `def score(...)` (or `score = lambda ...`) must accept two positional arguments; extra
    parameters need defaults.
    """
    try:
        tree = ast.parse(source, filename="metric.py")
        compile(tree, "metric.py", "exec")
    except SyntaxError as error:
        where = f"line {error.lineno}: " if error.lineno else ""
        raise MetricSourceInvalid(f"The metric does not compile: {where}{error.msg}.") from None
    except ValueError as error:  # e.g. a null byte in the source
        raise MetricSourceInvalid(f"The metric does not compile: {error}.") from None
    arguments = _score_arguments(tree)
    if arguments is None or not _takes_two_positional(arguments):
        raise MetricSourceInvalid("The metric defines no score(answer, reference) function.")


def _score_arguments(tree: ast.Module) -> ast.arguments | None:
    """The parameters of the last top-level definition of `score`, as Python would bind it."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == SCORE_FUNCTION:
            found = node.args
        elif isinstance(node, ast.AsyncFunctionDef) and node.name == SCORE_FUNCTION:
            found = None  # a coroutine function never returns a number
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == SCORE_FUNCTION for target in node.targets
        ):
            found = node.value.args if isinstance(node.value, ast.Lambda) else None
    return found


def _takes_two_positional(arguments: ast.arguments) -> bool:
    positional = [*arguments.posonlyargs, *arguments.args]
    if arguments.vararg is not None:
        return True
    if len(positional) < 2:
        return False
    without_default = len(positional) - len(arguments.defaults)
    required_keyword_only = any(default is None for default in arguments.kw_defaults)
    return without_default <= 2 and not required_keyword_only


def score_from_result(result: object) -> AnswerScore:
    """What a metric's return value scores: a number from 0 to 1 (bools excluded), else a `result` failure."""
    if isinstance(result, bool) or not isinstance(result, int | float) or not math.isfinite(result):
        return AnswerScore.failed("result")
    if not 0 <= result <= 1:
        return AnswerScore.failed("result")
    return AnswerScore(float(result))
