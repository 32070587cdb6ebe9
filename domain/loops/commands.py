"""The Verity application's training-loop commands (a mixin of `domain.application.Verity`).

The jobs drive a loop with `advance_loop(loop_id)`, called when the loop starts and whenever the run or the
evaluation it waits on has ended: it records the next step and answers what the jobs must do now.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.errors import SettingsInvalid
from domain.evaluations.benchmarks import BENCHMARKS, HELD_OUT_PROBLEMS, MATH_PAIRS_MAIN_METRIC, MATH_PAIRS_SCORING
from domain.loops.loop import QUEUED, SCORE_COLUMNS, TRAINING, TrainingLoop
from domain.loops.steps import JobSteps, LoopStep
from domain.runs.run_settings import FIELDS_BY_NAME, RunSettings
from domain.runs.states import FINISHED_WITH_ADAPTER, RUNNING
from domain.verity_parts import VerityParts
from domain.written import Written

LOOPS = Actor("system", "loops", "Training loop")
SEEDS = int(FIELDS_BY_NAME["seed"].maximum or 0) + 1  # a round's seed wraps round within the Seed field's bounds


class LoopCommands(JobSteps, VerityParts):
    def get_loop(self, org_id: UUID | None, loop_id: UUID) -> TrainingLoop:
        return self._get(TrainingLoop, loop_id, org_id, "training loop")

    def create_loop(
        self,
        org_id: UUID,
        project_id: UUID,
        *,
        name: str,
        benchmark: str,
        score_column: str,
        target_percent: float,
        max_rounds: int,
        give_up_after: int,
        reclaim_storage: bool,
        draft: RunSettings,
        actor: Actor,
        role: str,
        benchmark_size: int = 64,
    ) -> Written:
        """A loop, queued; each round's run takes `draft`'s RL settings (its reward defaults to the benchmark's)."""
        self.get_project(org_id, project_id)
        self._check_may_launch(org_id, role)  # type: ignore[attr-defined]
        errors: dict[str, str] = {}
        if not name.strip():
            errors["name"] = "Name the loop, for example math-pairs to 35%."
        if benchmark not in BENCHMARKS:
            errors["benchmark"] = f"Choose a benchmark: {', '.join(BENCHMARKS.values())}."
        if score_column not in SCORE_COLUMNS:
            errors["score_column"] = f"Choose a score column: {', '.join(SCORE_COLUMNS.values())}."
        if not _number_in(target_percent, 0, 100):
            errors["target"] = "Target must be a percent from 0 to 100."
        if not _whole_in(max_rounds, 1, 100):
            errors["max_rounds"] = "Max rounds must be a whole number from 1 to 100."
        if not _whole_in(give_up_after, 1, 100):
            errors["give_up_after"] = "Give up after must be a whole number from 1 to 100."
        if not _whole_in(benchmark_size, 1, HELD_OUT_PROBLEMS):
            errors["benchmark_size"] = f"The benchmark's problem count must be from 1 to {HELD_OUT_PROBLEMS:,}."
        if draft.is_trial:
            errors["kind"] = "Each loop round is a full RL run, not a trial."
        if draft.reward is None:
            draft = draft.with_values(reward={**MATH_PAIRS_SCORING, "metric": MATH_PAIRS_MAIN_METRIC})
        if errors:
            raise SettingsInvalid(errors)
        project = self.get_project(org_id, project_id)
        settings = self._checked_settings(org_id, project, draft.with_values(start_run=None))  # type: ignore[attr-defined]
        loop = TrainingLoop(
            org_id=org_id,
            project_id=project_id,
            name=name.strip(),
            benchmark=benchmark,
            benchmark_size=int(benchmark_size),
            score_column=score_column,
            target=float(target_percent) / 100,
            max_rounds=int(max_rounds),
            give_up_after=int(give_up_after),
            reclaim_storage=bool(reclaim_storage),
            run_settings=settings,
            actor=actor.to_dict(),
        )
        return Written(loop.id, self._save(loop))

    def stop_loop(self, org_id: UUID, loop_id: UUID, actor: Actor) -> Written:
        """Stop works at any time: the loop is Stopped, and its live run or evaluation is cancelled."""
        loop = self.get_loop(org_id, loop_id)
        loop.stop(actor.to_dict())
        current = loop.current or {}
        cancelled = self._cancel_live_jobs(current.get("run_id"), [current.get("evaluation_id")], actor)
        return Written(loop.id, self._save(loop, *cancelled))

    def advance_loop(self, loop_id: UUID) -> LoopStep:
        """Records the loop's next step from the state of its current run or evaluation; says what to do."""
        loop = self.get_loop(None, loop_id)
        if not loop.is_live:
            return LoopStep("done")
        if loop.state == QUEUED:
            return LoopStep("train", self._start_loop_round(loop))
        current = loop.current
        assert current is not None
        if loop.state == TRAINING:
            run = self.get_run(None, current["run_id"])  # type: ignore[attr-defined]
            if run.state in RUNNING:
                return LoopStep("wait", run.id)
            if run.state not in FINISHED_WITH_ADAPTER or run.adapter is None:
                return self._fail_ended(loop, f"Round {current['number']}'s run ended {run.status}", run.failure, LOOPS)
            written = self.create_evaluation(  # type: ignore[attr-defined]
                loop.org_id,
                loop.project_id,
                name=f"{loop.name} · round {current['number']}",
                source={"kind": "benchmark", "name": loop.benchmark, "count": loop.benchmark_size},
                scoring=MATH_PAIRS_SCORING,
                main_metric=MATH_PAIRS_MAIN_METRIC,
                actor=LOOPS,
                adapter_run=run.id,
                max_answer_tokens=loop.run_settings.max_answer_tokens,
            )
            loop = self.get_loop(None, loop_id)
            loop.benchmark_round(written.id, LOOPS.to_dict())
            self._save(loop)
            return LoopStep("evaluate", written.id)
        # benchmarking
        benchmark = f"Round {current['number']}'s benchmark"
        evaluation = self._completed_evaluation(loop, current["evaluation_id"], benchmark, LOOPS)
        if isinstance(evaluation, LoopStep):
            return evaluation
        score = evaluation.breakdown.get(loop.score_column, evaluation.score or 0.0)
        loop.score_round(float(score), LOOPS.to_dict())
        self._save(loop)
        if not loop.is_live:
            return LoopStep("done")
        return LoopStep("train", self._start_loop_round(loop))

    def _start_loop_round(self, loop: TrainingLoop) -> UUID:
        """A fresh full RL run from the best round's adapter so far (the base model for round 1), launched."""
        from domain.runs.run import Run

        number = len(loop.rounds) + 1
        best = loop.best_round
        start_run = str(loop.rounds[best - 1]["run_id"]) if best is not None else None
        saved = loop.run_settings
        # Each round takes the next seed, so it trains on prompts in a new order (and, on Math Pairs, on new
        # problems, never the benchmark's) instead of repeating round 1's from the best adapter.
        draft = saved.with_values(
            name=f"{loop.name} · round {number}", start_run=start_run, seed=(saved.seed + number - 1) % SEEDS
        )
        project = self.get_project(loop.org_id, loop.project_id)
        settings = self._checked_settings(loop.org_id, project, draft)  # type: ignore[attr-defined]
        run = Run(org_id=loop.org_id, project_id=loop.project_id, settings=settings, model=project.model,
                  actor=LOOPS.to_dict())
        run.launch(LOOPS.to_dict())
        loop.start_round(run.id, LOOPS.to_dict())
        self._save(run, loop)
        return run.id


def _number_in(value: Any, low: float, high: float) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and low <= value <= high


def _whole_in(value: Any, low: int, high: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high
