"""From a reward's settings to the grader that scores a batch of answers: every built-in metric lives here.

A custom metric is the organization's code and runs only in the trainer's sandbox, so it has no grader here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from domain.rewards.config import RewardConfig
from domain.rewards.metrics import classification, qa
from domain.rewards.metrics.numeric import NumericAccuracy
from domain.rewards.metrics.structured_json import FieldMatch, SchemaValidity
from domain.rewards.metrics.verifiable import CHECKS, VerifiableTask
from domain.rewards.types import AnswerScore, Grader

ScoreOne = Callable[[str, str], AnswerScore]


class CustomMetricNeedsSandbox(ValueError):
    """Raised for a custom reward: the trainer wraps its sandbox around the metric's code instead."""


@dataclass(frozen=True)
class MetricGrader:
    """A built-in metric applied answer by answer; it never fails an answer."""

    label: str
    score_one: ScoreOne

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        if len(answers) != len(references):
            raise ValueError(
                f"{len(answers)} answers but {len(references)} references: one reference per answer."
            )
        return [
            self.score_one(answer, reference) for answer, reference in zip(answers, references, strict=True)
        ]


def metric_function(config: RewardConfig) -> ScoreOne:
    """The function that scores one answer for a built-in reward."""
    if config.is_custom:
        raise CustomMetricNeedsSandbox(
            f"{config.metric} is a custom metric: it runs in the trainer's sandbox, not as a built-in grader."
        )
    match config.preset, config.metric:
        case "qa", "exact_match":
            return qa.exact_match
        case "qa", "normalized_exact_match":
            return qa.normalized_exact_match
        case "qa", "token_f1":
            return qa.token_f1
        case "classification", "accuracy":
            return classification.accuracy
        case "structured_json", "schema_validity":
            assert config.response_schema is not None  # RewardConfig.from_dict requires it
            return SchemaValidity(config.response_schema)
        case "structured_json", "field_match":
            return FieldMatch(config.fields)
        case "numeric", "numeric_accuracy":
            return NumericAccuracy(config.absolute_tolerance, config.relative_tolerance)
        case "verifiable", task if task in CHECKS:
            return VerifiableTask(CHECKS[task], format_bonus=config.format_bonus)
    raise ValueError(f"No built-in metric {config.metric!r} for preset {config.preset!r}.")


def build_grader(config: RewardConfig) -> Grader:
    """The grader of a built-in reward; raises CustomMetricNeedsSandbox for a custom one."""
    return MetricGrader(label=config.label, score_one=metric_function(config))
