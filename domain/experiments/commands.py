"""The Verity application's experiment commands (a mixin of `domain.application.Verity`).

The jobs drive an experiment with `advance_experiment(experiment_id)`, called when it starts and whenever the
evaluation or run it waits on has ended: it records the next step and answers what the jobs must do now
(the same `LoopStep` as a training loop's).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.errors import SettingsInvalid
from domain.evaluations.answer_length import ANSWER_LENGTH_MESSAGE, MAX_ANSWER_TOKENS_DEFAULT, is_answer_length
from domain.evaluations.scoring import checked_scoring, main_metric_label, reward_from_baseline
from domain.experiments.experiment import MEASURING, QUEUED, TRAINING, Experiment
from domain.loops.steps import JobSteps, LoopStep
from domain.rewards.config import NOT_A_REWARD, RewardConfig
from domain.runs import objectives
from domain.runs.run_settings import ROUND_SETTINGS, RunSettings
from domain.runs.settings import run_body_from_api
from domain.runs.states import FINISHED_WITH_ADAPTER, RUNNING
from domain.verity_parts import VerityParts
from domain.written import Written

EXPERIMENTS = Actor("system", "experiments", "Experiment")
CHOOSE_A_REWARD = "Choose a reward for RL: the metric that scores each sampled answer."
RL_FIELDS = (*ROUND_SETTINGS, "start_run")  # what an experiment's `rl` takes; the reward is its own


def reward_line(scoring: dict[str, Any], main_metric: str, reward: dict[str, Any] | None, is_main: bool) -> str:
    """The Compute step's words: "Reward: the evaluation's main metric (metric)" or the chosen reward."""
    if reward is None:
        return "Reward: none, the experiment reuses an adapter and trains nothing"
    if is_main:
        return f"Reward: the evaluation's main metric ({main_metric_label(scoring, main_metric)})"
    return f"Reward: {RewardConfig.from_dict(reward).label}"


class ExperimentCommands(JobSteps, VerityParts):
    def get_experiment(self, org_id: UUID | None, experiment_id: UUID) -> Experiment:
        return self._get(Experiment, experiment_id, org_id, "experiment")

    def create_experiment(
        self,
        org_id: UUID,
        project_id: UUID,
        *,
        name: str,
        actor: Actor,
        role: str,
        source: dict[str, Any] | None = None,
        scoring: dict[str, Any] | None = None,
        main_metric: str | None = None,
        baseline_id: UUID | None = None,
        reward: dict[str, Any] | None = None,
        rl: dict[str, Any] | None = None,
        advanced: dict[str, Any] | None = None,
        reused_run: UUID | None = None,
        max_answer_tokens: int = MAX_ANSWER_TOKENS_DEFAULT,
    ) -> Written:
        """An experiment, queued. A reused baseline fixes the evaluation settings, and so the default reward; a
        reused adapter (`reused_run`) trains nothing, so it needs no RL plan, whatever objective trained it."""
        project = self.get_project(org_id, project_id)
        # RL needs the Pro plan; an experiment that trains nothing only needs a role that may launch.
        self._check_may_launch(org_id, role, objectives.RL if reused_run is None else "sft")  # type: ignore[attr-defined]
        errors: dict[str, str] = {}
        if not name.strip():
            errors["name"] = "Name the experiment."
        if baseline_id is not None:
            baseline = self.completed_baseline(org_id, baseline_id)  # type: ignore[attr-defined]
            source, scoring, main_metric = baseline.source, baseline.scoring, baseline.main_metric
            max_answer_tokens = baseline.max_answer_tokens
        else:
            try:
                source = self._checked_source(org_id, source)  # type: ignore[attr-defined]
            except SettingsInvalid as problem:
                errors.update(problem.errors)
            try:
                scoring, main_metric = checked_scoring(scoring or {}, main_metric or "")
            except SettingsInvalid as problem:
                errors.update(problem.errors)
            # Checked now, not when the base model's evaluation is made: a bad length must change nothing.
            if not is_answer_length(max_answer_tokens):
                errors["evaluation_max_answer_tokens"] = ANSWER_LENGTH_MESSAGE
        if reused_run is not None:
            try:
                self._start_from(org_id, project, str(reused_run))  # type: ignore[attr-defined]
            except SettingsInvalid as problem:
                errors["reused_run"] = problem.errors["start_run"].replace("Start from", "The adapter")
        if errors:
            raise SettingsInvalid(errors)
        assert source is not None and scoring is not None and main_metric is not None
        run_settings: RunSettings | None = None
        is_main = reward is None
        if reused_run is None:
            if reward is None:
                if main_metric in NOT_A_REWARD:
                    raise SettingsInvalid({"reward": CHOOSE_A_REWARD})
                reward = reward_from_baseline(scoring, main_metric)
            body = {
                "name": f"{name.strip()} · RL",
                "dataset_version": source.get("id") if source["kind"] == "dataset_version" else None,
                "training": {"rl": {**{k: v for k, v in (rl or {}).items() if k in RL_FIELDS}, "reward": reward},
                             "advanced": advanced or {}},
            }
            draft = run_body_from_api(body)
            run_settings = self._checked_settings(org_id, project, draft)  # type: ignore[attr-defined]
            reward = run_settings.reward
        else:
            reward = None
        experiment = Experiment(
            org_id=org_id, project_id=project_id, name=name.strip(), source=source, scoring=scoring,
            main_metric=main_metric, max_answer_tokens=max_answer_tokens, reward=reward, reward_is_main_metric=is_main,
            run_settings=run_settings, reused_run=reused_run, baseline_id=baseline_id, actor=actor.to_dict(),
        )
        return Written(experiment.id, self._save(experiment))

    def stop_experiment(self, org_id: UUID, experiment_id: UUID, actor: Actor) -> Written:
        """Stop works at any time: the experiment is Stopped, and its live run or evaluation is cancelled."""
        experiment = self.get_experiment(org_id, experiment_id)
        experiment.stop(actor.to_dict())
        own_run = experiment.run_id if experiment.trains else None  # a reused run is not the experiment's to cancel
        cancelled = self._cancel_live_jobs(own_run, [experiment.baseline_id, experiment.evaluation_id], actor)
        return Written(experiment.id, self._save(experiment, *cancelled))

    def advance_experiment(self, experiment_id: UUID) -> LoopStep:
        """Records the experiment's next step from the state of what it waits on; says what the jobs do now."""
        experiment = self.get_experiment(None, experiment_id)
        if not experiment.is_live:
            return LoopStep("done")
        if experiment.state == QUEUED and experiment.baseline_id is None:
            written = self._experiment_evaluation(experiment, adapter_run=None, baseline_id=None, label="base model")
            experiment.measure(written.id, EXPERIMENTS.to_dict())
            self._save(experiment)
            return LoopStep("evaluate", written.id)
        if experiment.state in (QUEUED, MEASURING):
            base = self._completed_evaluation(
                experiment, experiment.baseline_id, "Measuring the base model", EXPERIMENTS
            )
            if isinstance(base, LoopStep):
                return base
            experiment.base_measured(base.score or 0.0, EXPERIMENTS.to_dict())
            if experiment.trains:
                run_id = self._start_experiment_run(experiment)
                return LoopStep("train", run_id)
            return self._evaluate_adapter(experiment, None)
        if experiment.state == TRAINING:
            run = self.get_run(None, experiment.run_id)  # type: ignore[attr-defined]
            if run.state in RUNNING:
                return LoopStep("wait", run.id)
            if run.state not in FINISHED_WITH_ADAPTER or run.adapter is None:
                return self._fail_ended(experiment, f"The RL run ended {run.status}", run.failure, EXPERIMENTS)
            return self._evaluate_adapter(experiment, _how_training_ended(run))
        evaluation = self._completed_evaluation(
            experiment, experiment.evaluation_id, "Evaluating the adapter", EXPERIMENTS
        )
        if isinstance(evaluation, LoopStep):
            return evaluation
        experiment.complete(evaluation.score or 0.0, EXPERIMENTS.to_dict())
        self._save(experiment)
        return LoopStep("done")

    def _experiment_evaluation(self, experiment: Experiment, *, adapter_run: UUID | None,
                               baseline_id: UUID | None, label: str) -> Written:
        return self.create_evaluation(  # type: ignore[attr-defined]
            experiment.org_id, experiment.project_id, name=f"{experiment.name} · {label}", source=experiment.source,
            scoring=experiment.scoring, main_metric=experiment.main_metric, actor=EXPERIMENTS,
            adapter_run=adapter_run, baseline_id=baseline_id, max_answer_tokens=experiment.max_answer_tokens,
        )

    def _evaluate_adapter(self, experiment: Experiment, training_ended: str | None) -> LoopStep:
        written = self._experiment_evaluation(
            experiment, adapter_run=experiment.run_id, baseline_id=experiment.baseline_id, label="adapter"
        )
        experiment.evaluate_adapter(written.id, training_ended, EXPERIMENTS.to_dict())
        self._save(experiment)
        return LoopStep("evaluate", written.id)

    def _start_experiment_run(self, experiment: Experiment) -> UUID:
        from domain.runs.run import Run

        assert experiment.run_settings is not None
        project = self.get_project(experiment.org_id, experiment.project_id)
        settings = self._checked_settings(experiment.org_id, project, experiment.run_settings)  # type: ignore[attr-defined]
        run = Run(org_id=experiment.org_id, project_id=experiment.project_id, settings=settings,
                  model=project.model, actor=EXPERIMENTS.to_dict())
        run.launch(EXPERIMENTS.to_dict())
        experiment.train(run.id, EXPERIMENTS.to_dict())
        self._save(run, experiment)
        return run.id


def _how_training_ended(run: Any) -> str:
    """ "Completed", or "Adapter ready: stopped (time_limit) after round 2 of 20; best round 2"."""
    stop = getattr(run, "stop", None) or {}
    if stop.get("reason"):
        return (f"{run.status}: stopped ({stop['reason']}) after round {stop.get('after_round')} of "
                f"{run.total_rounds}; best round {stop.get('best_round')}")
    return run.status
