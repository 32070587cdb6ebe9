"""The try a run gives its custom metric before the model loads: one reference scored against itself."""

from __future__ import annotations

from trainer.sandbox.limits import SandboxLimits
from trainer.sandbox.metric import SandboxedMetric

LOAD_FAILURE = "the metric failed to load: "


def _compile_problem(source: str) -> str | None:
    """Compiling runs none of the metric's code, so the trainer may do it itself."""
    try:
        compile(source, "metric.py", "exec")
    except SyntaxError as error:
        where = f" (line {error.lineno})" if error.lineno else ""
        return f"The metric does not compile: {error.msg}{where}."
    except ValueError as error:  # e.g. a null byte in the source
        return f"The metric does not compile: {error}."
    return None


def try_on_reference(source: str, reference: str, *, limits: SandboxLimits = SandboxLimits()) -> str | None:
    """None when the metric scores `reference` against itself with a number in [0, 1]; else why not, in words.

    The reason names no part of the reference, as it goes to the run's logs:

    >>> try_on_reference("def score(answer, reference):\\n    return 1 / 0", "42")
    'The metric raised ZeroDivisionError at line 2 on the reference.'
    """
    problem = _compile_problem(source)
    if problem:
        return problem
    with SandboxedMetric(source, name="reference check", limits=limits) as metric:
        (graded,) = metric.grade([reference], [reference])
    kind = graded.score.failure
    if kind is None:
        return None
    detail = graded.detail
    if kind == "execution" and "does not define score" in detail:
        return "The metric does not define score(answer, reference)."
    if kind == "execution" and detail.startswith(LOAD_FAILURE):
        return f"The metric failed to load: {detail.removeprefix(LOAD_FAILURE)}."
    error_name = detail.partition(": ")[0]  # e.g. "KeyError at line 4", without the message
    reasons = {
        "execution": f"The metric raised {error_name} on the reference.",
        "result": "The metric did not return a number from 0 to 1 for the reference.",
        "timeout": f"The metric ran out of time: a batch of up to {limits.batch_size} answers has "
        f"{limits.batch_seconds:g} seconds.",
        "memory": f"The metric ran out of memory: a batch of up to {limits.batch_size} answers has "
        f"{limits.memory_bytes // (1024 * 1024)} MiB.",
        "output": f"The metric printed more than {limits.output_bytes // 1024} KiB.",
    }
    return reasons[kind]
