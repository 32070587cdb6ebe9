"""The try a run gives its custom metric before the model loads: one reference scored against itself."""

from __future__ import annotations

from domain.rewards.custom import MetricSourceInvalid, check_metric_source
from trainer.sandbox.limits import SandboxLimits
from trainer.sandbox.metric import SandboxedMetric

LOAD_FAILURE = "the metric failed to load: "
NO_SCORE_FUNCTION = "The metric defines no score(answer, reference) function."  # as check_metric_source says


def try_on_reference(source: str, reference: str, *, limits: SandboxLimits = SandboxLimits()) -> str | None:
    """None when the metric scores `reference` against itself with a number in [0, 1]; else why not, in words.

    The reason names no part of the reference, as it goes to the run's logs:

    >>> try_on_reference("def score(answer, reference):\\n    return 1 / 0", "42")
    'The metric raised ZeroDivisionError at line 2 on the reference.'
    """
    try:
        check_metric_source(source)  # compiles and inspects it, runs none of it
    except MetricSourceInvalid as invalid:
        return invalid.reason
    with SandboxedMetric(source, name="reference check", limits=limits) as metric:
        (graded,) = metric.grade([reference], [reference])
    kind = graded.score.failure
    if kind is None:
        return None
    detail = graded.detail
    if kind == "execution" and detail == NO_SCORE_FUNCTION:
        return NO_SCORE_FUNCTION
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
