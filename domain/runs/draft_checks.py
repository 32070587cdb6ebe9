"""The checks a run's draft passes before it is saved: the settings a run saves, or every problem in words.

A mixin of `domain.application.Verity`, through `RunCommands` (domain/runs/commands.py). It uses the application's
`get_run` and the checks of the other contexts: the reward a baseline gives (`baseline_reward`), a custom reward
(`custom_reward_problems`) and the dataset version (`dataset_version_problems`, `get_dataset_version`). Loops,
experiments and evaluations check their drafts and their Start from here too.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from domain.errors import NotFound, SettingsInvalid
from domain.organizations import Project
from domain.runs import objectives
from domain.runs.drafts import ADAPTER_SHAPE, adapter_locked_problems
from domain.runs.reward import makes_own_prompts, resolve_reward
from domain.runs.run import Run
from domain.runs.run_settings import RunSettings, revision_to_pin, saved_revision
from domain.runs.states import FINISHED_WITH_ADAPTER


def vision_refusal(model: str) -> str:
    return f"RL trains text models. {model} is a vision model: choose SFT or DPO, or a text model."


def _continuing(draft: RunSettings, source: Run) -> RunSettings:
    """A draft that starts from `source`: its adapter's size and scaling, and the run's id."""
    shape = {name: getattr(source.settings, name) for name in ADAPTER_SHAPE}
    return draft.with_values(**shape, start_run=str(source.id))


class DraftChecks:
    # provided by Verity
    get_run: Any
    get_dataset_version: Any
    baseline_reward: Any
    custom_reward_problems: Any
    dataset_version_problems: Any

    def _checked_settings(self, org_id: UUID, project: Project, draft: RunSettings) -> RunSettings:
        """The settings a run saves, or SettingsInvalid with every problem (model, reward, Start from)."""
        errors: dict[str, str] = {}
        # the saved settings hold the revision the run will pin, so Start from and the trainer read it there
        draft = draft.with_values(model_revision=revision_to_pin(draft.model_revision, project.revision))
        if not objectives.is_rl(draft.objective):
            return self._checked_tuning_settings(org_id, project, draft)
        if project.vision:
            errors[""] = vision_refusal(project.model)
        try:
            # 000: "For a run with a baseline, the reward starts as that baseline's scoring and main metric" (a
            # trial of the full run planned too; a trial with no baseline chooses its reward)
            if draft.reward is None and draft.baseline:
                draft = draft.with_values(reward=self.baseline_reward(org_id, draft.baseline, draft.dataset_version))
            draft = draft.with_values(reward=resolve_reward(draft.reward, is_trial=draft.is_trial))
        except SettingsInvalid as problem:
            errors.update(problem.errors)
        if "reward" not in errors:
            errors.update(self.custom_reward_problems(org_id, draft.reward))
        # Math Pairs makes its own prompts (001: "the Dataset field above is ignored"): the version's references
        # are not what it scores, so they are not checked against it
        checked_reward = None if makes_own_prompts(draft.reward) else draft.reward
        errors.update(self.dataset_version_problems(org_id, draft.dataset_version, checked_reward))
        source = self._draft_source(org_id, project, draft, errors)
        if source is not None:
            errors.update(adapter_locked_problems(draft, source.settings))
            draft = _continuing(draft, source)
        if errors:
            raise SettingsInvalid(errors)
        return draft.saved()

    def _checked_tuning_settings(self, org_id: UUID, project: Project, draft: RunSettings) -> RunSettings:
        """An SFT, DPO or Head draft: no reward; a text version with training and validation examples (pairs for
        DPO); Start from as for RL (the source's rank and alpha), a Head run's only for Head."""
        errors: dict[str, str] = {}
        name = objectives.OBJECTIVE_NAMES[draft.objective]
        draft = draft.with_values(reward=None)
        if not draft.dataset_version:
            errors["dataset_version"] = objectives.NEEDS_VERSION.format(name=name)
        else:
            errors.update(self.dataset_version_problems(org_id, draft.dataset_version, None, name))
            if not errors and draft.objective == objectives.DPO:
                version = self.get_dataset_version(org_id, UUID(str(draft.dataset_version)))
                if version.shape != "preference":
                    errors["dataset_version"] = objectives.NEEDS_PAIRS.format(label=version.label)
        source = self._draft_source(org_id, project, draft, errors)
        if source is not None:
            run_name = f"“{source.settings.name or 'Untitled'}”"
            if draft.objective == objectives.HEAD and source.objective != objectives.HEAD:
                # continuing an adapter trains all of it: one beyond the head would not be Head training
                errors["start_run"] = objectives.HEAD_STARTS_FROM_HEAD.format(
                    run=run_name, a_run=objectives.A_RUN[source.objective]
                )
            elif draft.objective != objectives.HEAD and self._adapter_trains_head(org_id, source):
                errors["start_run"] = objectives.TUNING_FROM_HEAD.format(name=name, run=run_name)
            errors.update(adapter_locked_problems(draft, source.settings))
            draft = _continuing(draft, source)
        if errors:
            raise SettingsInvalid(errors)
        return draft.saved()

    def _draft_source(self, org_id: UUID, project: Project, draft: RunSettings, errors: dict[str, str]) -> Run | None:
        """The run whose adapter the draft's Start from continues; None when it names none, or when it names one
        it can't start from, whose problems then go to `errors`."""
        if draft.start_run is None:
            return None
        try:
            return self._start_from(org_id, project, draft.start_run, draft.model_revision)
        except SettingsInvalid as problem:
            errors.update(problem.errors)
            return None

    def _adapter_trains_head(self, org_id: UUID, run: Run) -> bool:
        """Whether a run's adapter has a part on the output head: a Head run's, or one continued from it (RL
        from a Head run keeps the head's update)."""
        seen: set[str] = set()
        while run.objective != objectives.HEAD:
            start_run = run.settings.start_run
            if not start_run or start_run in seen:
                return False
            seen.add(start_run)
            try:
                run = self.get_run(org_id, UUID(str(start_run)))
            except (ValueError, NotFound):
                return False
        return True

    def _adapter_of(self, org_id: UUID, project: Project, adapter_run: Any, errors: dict[str, str]) -> Any:
        """The adapter an evaluation or a probe scores (None for the base model); a run that has none to give adds
        its words to `errors` under "adapter_run"."""
        if adapter_run is None:
            return None
        try:
            run = self._start_from(org_id, project, str(adapter_run))
        except SettingsInvalid as problem:
            errors["adapter_run"] = problem.errors["start_run"].replace("Start from", "The adapter")
            return None
        return dict(run.adapter or {})  # _start_from gives only a run with an adapter

    def _start_from(self, org_id: UUID, project: Project, start_run: str, revision: str | None = None) -> Run:
        """The run whose adapter a new run continues. `revision`: the one the new run pins (000: "the run must
        have trained the same revision this run will pin"); None (an evaluation's or an experiment's adapter)
        leaves the revision unchecked, as before runs had one."""
        try:
            source = self.get_run(org_id, UUID(str(start_run)))
        except (ValueError, NotFound):
            raise SettingsInvalid({"start_run": "Start from must be a run of this project."}) from None
        if source.project_id != project.id or source.model != project.model:
            raise SettingsInvalid(
                {"start_run": "Start from must be a run of this project that trained its model."}
            )
        if source.is_trial:
            raise SettingsInvalid({"start_run": "Start from can't be a trial: its adapter is only a check."})
        if source.state not in FINISHED_WITH_ADAPTER or source.adapter is None:
            raise SettingsInvalid(
                {
                    "start_run": f"Start from must be a finished run with an adapter (Adapter ready "
                    f"or Completed): that run is {source.status}."
                }
            )
        trained = saved_revision(source.settings, project.revision)
        if revision is not None and trained != revision:
            raise SettingsInvalid(
                {
                    "start_run": f"Start from must be a run trained on revision {revision} of the model: that run "
                    f"trained {trained}."
                }
            )
        return source
