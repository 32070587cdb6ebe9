"""The Verity application's evaluation commands (a mixin of `domain.application.Verity`).

- `create_evaluation`: the base model, or the base with a finished run's adapter, on a version's test examples
  or a built-in benchmark, with a scoring and a main metric.
- `score_against_baseline`: a run's adapter on the same test examples, scoring and main metric as its baseline.
- `baseline_reward`: the reward a full run takes from its completed baseline (000's default).
- progress the jobs record: `record_evaluation_started / _completed / _failed`, and `cancel_evaluation`.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.actors import TRAINER, Actor
from domain.errors import NotFound, SettingsInvalid
from domain.evaluations.answer_length import ANSWER_LENGTH_MESSAGE, MAX_ANSWER_TOKENS_DEFAULT, is_answer_length
from domain.evaluations.benchmarks import BENCHMARKS, HELD_OUT_DEFAULT_COUNT, HELD_OUT_PROBLEMS
from domain.evaluations.evaluation import COMPLETED, Evaluation
from domain.evaluations.scoring import checked_scoring, reward_from_baseline
from domain.verity_parts import VerityParts
from domain.written import Written

BENCHMARK_COUNT_MESSAGE = f"A benchmark's problem count must be from 1 to {HELD_OUT_PROBLEMS:,}."
NO_SUCH_BASELINE = "The baseline must be a completed evaluation of the base model in this organization."
BASELINE_NOT_COMPLETED = "The baseline evaluation is {status}: a full run's reward comes from a completed baseline."
BASELINE_OTHER_VERSION = "The baseline must be an evaluation of the run's dataset version."


class EvaluationCommands(VerityParts):
    def get_evaluation(self, org_id: UUID | None, evaluation_id: UUID) -> Evaluation:
        """`org_id` None is for the jobs, which act for whichever organization owns the evaluation."""
        return self._get(Evaluation, evaluation_id, org_id, "evaluation")

    def _checked_source(self, org_id: UUID, source: Any) -> dict[str, Any]:
        if not isinstance(source, dict):
            raise SettingsInvalid({"source": "Choose the test examples: a dataset version or a benchmark."})
        if source.get("kind") == "benchmark":
            if source.get("name") not in BENCHMARKS:
                raise SettingsInvalid({"source": f"Unknown benchmark {source.get('name')!r}."})
            count = source.get("count", HELD_OUT_DEFAULT_COUNT)
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= HELD_OUT_PROBLEMS:
                raise SettingsInvalid({"source": BENCHMARK_COUNT_MESSAGE})
            return {"kind": "benchmark", "name": source["name"], "count": count}
        if source.get("kind") == "dataset_version":
            try:
                version = self.get_dataset_version(org_id, UUID(str(source.get("id"))))  # type: ignore[attr-defined]
            except (ValueError, NotFound):
                raise SettingsInvalid({"source": "There is no such dataset version in this organization."}) from None
            if not version.split_counts.get("test"):
                raise SettingsInvalid({"source": f"{version.label} has no test examples to evaluate on."})
            return {"kind": "dataset_version", "id": str(version.id), "label": version.label}
        raise SettingsInvalid({"source": "Choose the test examples: a dataset version or a benchmark."})

    def create_evaluation(
        self,
        org_id: UUID,
        project_id: UUID,
        *,
        name: str,
        source: dict[str, Any],
        scoring: dict[str, Any],
        main_metric: str,
        actor: Actor,
        adapter_run: UUID | None = None,
        baseline_id: UUID | None = None,
        max_answer_tokens: int = MAX_ANSWER_TOKENS_DEFAULT,
    ) -> Written:
        project = self.get_project(org_id, project_id)
        errors: dict[str, str] = {}
        try:
            source = self._checked_source(org_id, source)
        except SettingsInvalid as problem:
            errors.update(problem.errors)
        try:
            scoring, main_metric = checked_scoring(scoring, main_metric)
        except SettingsInvalid as problem:
            errors.update(problem.errors)
        if scoring.get("custom_metric") if isinstance(scoring, dict) else False:
            errors.update(self.custom_reward_problems(org_id, scoring))  # type: ignore[attr-defined]
        if not is_answer_length(max_answer_tokens):
            errors["max_answer_tokens"] = ANSWER_LENGTH_MESSAGE
        adapter = self._adapter_of(org_id, project, adapter_run, errors)  # type: ignore[attr-defined]
        if errors:
            raise SettingsInvalid(errors)
        evaluation = Evaluation(
            org_id=org_id,
            project_id=project_id,
            name=name.strip() or ("Baseline" if adapter_run is None else "Adapter evaluation"),
            model=project.model,
            source=source,
            scoring=scoring,
            main_metric=main_metric,
            adapter_run=adapter_run,
            adapter=adapter,
            baseline_id=baseline_id,
            max_answer_tokens=max_answer_tokens,
            actor=actor.to_dict(),
        )
        return Written(evaluation.id, self._save(evaluation))

    def completed_baseline(self, org_id: UUID, baseline_id: Any, dataset_version: str | None = None) -> Evaluation:
        """The run's baseline: a completed evaluation of the base model (on the run's version, if it names one)."""
        try:
            baseline = self.get_evaluation(org_id, UUID(str(baseline_id)))
        except (ValueError, NotFound):
            raise SettingsInvalid({"baseline": NO_SUCH_BASELINE}) from None
        if not baseline.is_baseline:
            raise SettingsInvalid({"baseline": NO_SUCH_BASELINE})
        if baseline.state != COMPLETED:
            raise SettingsInvalid({"baseline": BASELINE_NOT_COMPLETED.format(status=baseline.status.lower())})
        if dataset_version and baseline.source.get("id") != str(dataset_version):
            raise SettingsInvalid({"baseline": BASELINE_OTHER_VERSION})
        return baseline

    def baseline_reward(self, org_id: UUID, baseline_id: Any, dataset_version: str | None = None) -> dict[str, Any]:
        """000: "For a run with a baseline, the reward starts as that baseline's scoring and main metric"."""
        baseline = self.completed_baseline(org_id, baseline_id, dataset_version)
        return reward_from_baseline(baseline.scoring, baseline.main_metric)

    def score_against_baseline(
        self, org_id: UUID, run_id: UUID, actor: Actor, baseline_id: UUID | None = None
    ) -> Written:
        """The run's adapter on its baseline's test examples, scoring and main metric, linked to the baseline."""
        run = self.get_run(org_id, run_id)  # type: ignore[attr-defined]
        named = baseline_id or run.settings.baseline
        if not named:
            raise SettingsInvalid({"baseline": "Score against baseline needs a baseline: choose one."})
        baseline = self.completed_baseline(org_id, named)
        return self.create_evaluation(
            org_id,
            run.project_id,
            name=f"{run.settings.name or 'Run'} against baseline",
            source=baseline.source,
            scoring=baseline.scoring,
            main_metric=baseline.main_metric,
            actor=actor,
            adapter_run=run.id,
            baseline_id=baseline.id,
            max_answer_tokens=baseline.max_answer_tokens,
        )

    def cancel_evaluation(self, org_id: UUID, evaluation_id: UUID, actor: Actor) -> Written:
        evaluation = self.get_evaluation(org_id, evaluation_id)
        evaluation.cancel(actor.to_dict())
        return Written(evaluation.id, self._save(evaluation))

    # --- progress the jobs record --------------------------------------------------------------------------
    def record_evaluation_started(self, evaluation_id: UUID, actor: Actor = TRAINER) -> Written:
        evaluation = self.get_evaluation(None, evaluation_id)
        evaluation.start(actor.to_dict())
        return Written(evaluation.id, self._save(evaluation))

    def record_evaluation_completed(
        self, evaluation_id: UUID, score: float, breakdown: dict[str, float], results: list[dict[str, Any]],
        actor: Actor = TRAINER, *, metric_failures: dict[str, Any] | None = None,
    ) -> Written:
        """`metric_failures`: the custom metric's failed batches (domain/rewards/batch_failures.py), when any."""
        evaluation = self.get_evaluation(None, evaluation_id)
        evaluation.complete(score, breakdown, results, actor.to_dict(), metric_failures)
        return Written(evaluation.id, self._save(evaluation))

    def record_evaluation_failed(self, evaluation_id: UUID, message: str, actor: Actor = TRAINER) -> Written:
        evaluation = self.get_evaluation(None, evaluation_id)
        evaluation.fail(message, actor.to_dict())
        return Written(evaluation.id, self._save(evaluation))
