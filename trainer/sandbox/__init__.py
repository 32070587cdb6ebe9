"""The custom-metric sandbox: an organization's score(answer, reference) run in locked-down processes."""

from trainer.sandbox.isolation import IsolationMissing
from trainer.sandbox.limits import SandboxLimits
from trainer.sandbox.metric import GradedAnswer, SandboxedMetric, SandboxError
from trainer.sandbox.reference_check import try_on_reference

__all__ = ["GradedAnswer", "IsolationMissing", "SandboxError", "SandboxLimits", "SandboxedMetric", "try_on_reference"]
