"""The Verity application: every command of the console, the API and the jobs, recorded as events.

Contract notes (CONTRACT_SPINE.md), where this module adds to it:
- `retry_run` takes `role` too (default "owner": its caller already passed the page's role check); a retry
  saves and launches the new run at once, linked to the old one (`retry_of` / `retried_as`).
- Progress commands take an optional `actor` (default: the Trainer system actor).
- `record_saving_adapter` and `record_adapter_ready` record a failure instead when no round had a
  learning signal (000: "the run fails instead of completing"); the position is then that failure's.
- `get_run(org_id, run_id)` reads the aggregate (settings for the jobs' run spec, state for checks).
- Datasets and custom metrics come from mixins (domain/datasets/commands.py, domain/custom_metric_commands.py):
  a draft naming a dataset version or a custom reward is checked there; `Written` lives in domain/written.py.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError

from domain.access import roles
from domain.access.commands import AccessCommands
from domain.access.roles import MERGE_ROLE_NEEDED, ROLE_NEEDED
from domain.actors import TRAINER, Actor
from domain.custom_metric_commands import CustomMetricCommands
from domain.datasets.commands import DatasetCommands
from domain.errors import (
    ConcurrentChange,
    DomainError,
    NotAllowed,
    NotFound,
    NotReady,
    PlanNeeded,
    SettingsInvalid,
)
from domain.evaluations.commands import EvaluationCommands
from domain.experiments.commands import ExperimentCommands
from domain.loops.commands import LoopCommands
from domain.organizations import PLANS, Organization, Project
from domain.runs import objectives
from domain.runs.drafts import adapter_locked_problems, changed_settings, copy_name
from domain.runs.progress import RoundResult, StepLog, TrialReport
from domain.runs.reward import makes_own_prompts, resolve_reward
from domain.runs.run import DRAFT, FINISHED_WITH_ADAPTER, Run
from domain.runs.settings import RunDraft, revision_to_pin, run_body_from_api, saved_revision
from domain.written import Written

Role = Literal["owner", "member", "viewer"]
A = TypeVar("A", bound=Aggregate)

PRO_PLAN_NEEDED = (
    "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."
)
AGENT_NEEDS_BASELINE = (
    "start_training takes its reward from a completed baseline evaluation of the run's dataset version: name one "
    "(list_baselines shows them)."
)
CONCURRENT = (
    "Someone else changed this at the same time. Reload the page to see their change, then try again."
)


@dataclass(frozen=True)
class NewOrganization:
    """An organization created with its first owner; `password` is set only when their account was created
    with it (show it once)."""

    org_id: UUID
    owner_id: UUID
    owner_email: str
    password: str | None
    position: int


def vision_refusal(model: str) -> str:
    return f"RL trains text models. {model} is a vision model: choose SFT or DPO, or a text model."


class Verity(
    AccessCommands, DatasetCommands, CustomMetricCommands, EvaluationCommands, LoopCommands, ExperimentCommands,
    Application,
):
    name = "Verity"
    log_section_size = 1000  # projections read the log in pages of up to 1,000 events

    # --- infrastructure ------------------------------------------------------------------------------------
    def _save(self, *aggregates: Aggregate) -> int:
        try:
            recordings = self.save(*aggregates)
        except IntegrityError:
            raise ConcurrentChange(CONCURRENT) from None
        return recordings[-1].notification.id if recordings else self.recorder.max_notification_id() or 0

    def _get(self, cls: type[A], aggregate_id: UUID, org_id: UUID | None, what: str) -> A:
        try:
            aggregate = self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            raise NotFound(f"There is no such {what}.") from None
        if not isinstance(aggregate, cls) or (org_id is not None and _org_of(aggregate) != org_id):
            raise NotFound(f"There is no such {what}.")
        return aggregate

    def get_organization(self, org_id: UUID) -> Organization:
        return self._get(Organization, org_id, org_id, "organization")

    def get_project(self, org_id: UUID, project_id: UUID) -> Project:
        return self._get(Project, project_id, org_id, "project")

    def get_run(self, org_id: UUID | None, run_id: UUID) -> Run:
        """`org_id` None is for the jobs, which act for whichever organization owns the run."""
        return self._get(Run, run_id, org_id, "run")

    # --- organizations and projects ------------------------------------------------------------------------
    def create_organization(self, name: str, plan: str, actor: Actor) -> Written:
        organization = self._new_organization(name, plan, actor)
        return Written(organization.id, self._save(organization))

    def create_organization_with_owner(self, name: str, plan: str, owner_email: str, actor: Actor) -> NewOrganization:
        """An organization and its first owner, recorded together or not at all. An owner with no account gets
        one with a random password (`password` of the answer: show it once); an existing account keeps its own."""
        organization = self._new_organization(name, plan, actor)
        account = self.find_account(owner_email)
        password = None
        if account is None:
            password = secrets.token_urlsafe(16)
            account = self._new_account(owner_email, password, actor)
        organization.add_member(str(account.id), account.email, "owner", actor.to_dict())
        saved = (organization,) if password is None else (account, organization)
        return NewOrganization(organization.id, account.id, account.email, password, self._save(*saved))

    def _new_organization(self, name: str, plan: str, actor: Actor) -> Organization:
        name = name.strip()
        if not name:
            raise SettingsInvalid({"name": "Name the organization."})
        _check_plan(plan)
        if Organization.create_id(name) in self.repository:
            raise DomainError(f"An organization named {name} already exists.")
        return Organization(name=name, plan=plan, actor=actor.to_dict())

    def set_plan(self, org_id: UUID, plan: str, actor: Actor) -> Written:
        _check_plan(plan)
        organization = self.get_organization(org_id)
        organization.change_plan(plan, actor.to_dict())
        return Written(org_id, self._save(organization))

    def create_project(
        self, org_id: UUID, name: str, model: str, revision: str | None, vision: bool, actor: Actor
    ) -> Written:
        self.get_organization(org_id)
        errors = {}
        if not name.strip():
            errors["name"] = "Name the project."
        if not model.strip():
            errors["model"] = (
                "Choose the project's model: a hub id such as Qwen/Qwen2.5-0.5B-Instruct, or a folder."
            )
        if errors:
            raise SettingsInvalid(errors)
        if Project.create_id(org_id, name) in self.repository:
            raise DomainError(f"A project named {name.strip()} already exists.")
        project = Project(
            org_id=org_id,
            name=name.strip(),
            model=model.strip(),
            revision=(revision or "").strip() or None,
            vision=vision,
            actor=actor.to_dict(),
        )
        return Written(project.id, self._save(project))

    def set_project_run_defaults(
        self, org_id: UUID, project_id: UUID, defaults: dict[str, Any], actor: Actor
    ) -> Written:
        """The starting values of the project's Configure form; refused unless every value is a valid setting."""
        project = self.get_project(org_id, project_id)
        run_body_from_api({"training": defaults})  # raises SettingsInvalid with the form's words
        project.set_run_defaults(defaults, actor.to_dict())
        return Written(project.id, self._save(project))

    # --- runs: the user's commands -------------------------------------------------------------------------
    def _checked_settings(self, org_id: UUID, project: Project, draft: RunDraft) -> dict[str, Any]:
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
        if draft.start_run is not None:
            try:
                source = self._start_from(org_id, project, draft.start_run, draft.model_revision)
            except SettingsInvalid as problem:
                errors.update(problem.errors)
            else:
                errors.update(_adapter_locked(draft, source))
                advanced = source.settings["training"]["advanced"]
                draft = draft.with_values(
                    lora_rank=advanced["lora_rank"],
                    lora_alpha=advanced["lora_alpha"],
                    start_run=str(source.id),
                )
        if errors:
            raise SettingsInvalid(errors)
        return draft.to_api()

    def _checked_tuning_settings(self, org_id: UUID, project: Project, draft: RunDraft) -> dict[str, Any]:
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
        if draft.start_run is not None:
            try:
                source = self._start_from(org_id, project, draft.start_run, draft.model_revision)
            except SettingsInvalid as problem:
                errors.update(problem.errors)
            else:
                run_name = f"“{source.settings['name'] or 'Untitled'}”"
                if draft.objective == objectives.HEAD and source.objective != objectives.HEAD:
                    # continuing an adapter trains all of it: one beyond the head would not be Head training
                    errors["start_run"] = objectives.HEAD_STARTS_FROM_HEAD.format(
                        run=run_name, a_run=objectives.A_RUN[source.objective]
                    )
                elif draft.objective != objectives.HEAD and self._adapter_trains_head(org_id, source):
                    errors["start_run"] = objectives.TUNING_FROM_HEAD.format(name=name, run=run_name)
                errors.update(_adapter_locked(draft, source))
                advanced = source.settings["training"]["advanced"]
                draft = draft.with_values(
                    lora_rank=advanced["lora_rank"], lora_alpha=advanced["lora_alpha"], start_run=str(source.id)
                )
        if errors:
            raise SettingsInvalid(errors)
        return draft.to_api()

    def _adapter_trains_head(self, org_id: UUID, run: Run) -> bool:
        """Whether a run's adapter has a part on the output head: a Head run's, or one continued from it (RL
        from a Head run keeps the head's update)."""
        seen: set[str] = set()
        while run.objective != objectives.HEAD:
            start_run = run.settings["training"]["rl"].get("start_run")
            if not start_run or start_run in seen:
                return False
            seen.add(start_run)
            try:
                run = self.get_run(org_id, UUID(str(start_run)))
            except (ValueError, NotFound):
                return False
        return True

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

    def save_run(self, org_id: UUID, project_id: UUID, draft: RunDraft, actor: Actor) -> Written:
        """Saves a draft. Saving never starts a GPU, and a draft saves on any plan."""
        project = self.get_project(org_id, project_id)
        settings = self._checked_settings(org_id, project, draft)
        run = Run(
            org_id=org_id,
            project_id=project_id,
            settings=settings,
            model=project.model,
            actor=actor.to_dict(),
        )
        return Written(run.id, self._save(run))

    def edit_run(self, org_id: UUID, run_id: UUID, draft: RunDraft, actor: Actor) -> Written:
        """A draft's new settings, checked as saving checks them; the timeline names what changed."""
        run = self.get_run(org_id, run_id)
        run.check_editable()  # before the settings, so a launched run is refused for what it is
        project = self.get_project(org_id, run.project_id)
        settings = self._checked_settings(org_id, project, draft)
        run.edit(settings, actor.to_dict(), changes=changed_settings(run.settings, settings))
        return Written(run_id, self._save(run))

    def delete_run(self, org_id: UUID, run_id: UUID, actor: Actor) -> Written:
        """A draft leaves the Runs list; its events stay in the store, its timeline and the feed."""
        run = self.get_run(org_id, run_id)
        run.delete(actor.to_dict())
        return Written(run_id, self._save(run))

    def _check_may_launch(self, org_id: UUID, role: Role, objective: str = objectives.RL) -> None:
        """RL needs the Pro plan (000); SFT, DPO and Head launch on any plan. Every launch needs member or owner."""
        if objectives.is_rl(objective) and not self.get_organization(org_id).has_rl:
            raise PlanNeeded(PRO_PLAN_NEEDED)
        if not roles.may(role, roles.LAUNCH):
            raise NotAllowed(ROLE_NEEDED)

    def launch_run(
        self, org_id: UUID, run_id: UUID, actor: Actor, role: Role, not_ready: str | None = None
    ) -> Written:
        """`not_ready`: why the worker that would train it can't (launch readiness, which the caller asked where
        the worker is); the launch is refused with those words once the plan and role allow it, and nothing is
        queued."""
        run = self.get_run(org_id, run_id)
        self._check_may_launch(org_id, role, run.objective)
        if not_ready and run.state == DRAFT:  # a run past its draft is refused for what it is
            raise NotReady(not_ready)
        run.launch(actor.to_dict())
        return Written(run_id, self._save(run))

    def start_training(
        self,
        org_id: UUID,
        project_id: UUID,
        draft: RunDraft,
        actor: Actor,
        role: Role,
        readiness: Callable[[dict[str, Any]], str | None] | None = None,
    ) -> Written:
        """000: "An agent starts RL with start_training, which takes the settings as rounds, prompts_per_round,
        answers_per_prompt, max_answer_tokens and start_run, and always takes the baseline's main metric as the
        reward." A full run or a trial, saved and launched in one write: refused as a whole, in the words a launch
        or a save would use, or recorded as a whole (saved, then launched). `readiness` tells, for the settings the
        run would save, why the worker that would train it can't (launch readiness, as `launch_run`'s `not_ready`)."""
        self._check_may_launch(org_id, role, draft.objective)
        if not draft.baseline:
            raise SettingsInvalid({"baseline": AGENT_NEEDS_BASELINE})
        reward = self.baseline_reward(org_id, draft.baseline, draft.dataset_version)
        project = self.get_project(org_id, project_id)
        settings = self._checked_settings(org_id, project, draft.with_values(reward=reward))
        not_ready = readiness(settings) if readiness is not None else None
        if not_ready:
            raise NotReady(not_ready)
        run = Run(org_id=org_id, project_id=project_id, settings=settings, model=project.model, actor=actor.to_dict())
        run.launch(actor.to_dict())
        return Written(run.id, self._save(run))

    def cancel_run(self, org_id: UUID, run_id: UUID, actor: Actor) -> Written:
        run = self.get_run(org_id, run_id)
        run.cancel(actor.to_dict())
        return Written(run_id, self._save(run))

    def retry_run(
        self, org_id: UUID, run_id: UUID, actor: Actor, role: Role = "owner", not_ready: str | None = None
    ) -> Written:
        """A new run from round 1 with the same settings, launched at once; the old run links to it. `not_ready`
        refuses it as it refuses a launch."""
        old = self.get_run(org_id, run_id)
        old.check_retry()
        self._check_may_launch(org_id, role, old.objective)
        if not_ready:
            raise NotReady(not_ready)
        new = Run(
            org_id=org_id,
            project_id=old.project_id,
            settings=old.settings,
            model=old.model,
            actor=actor.to_dict(),
            retry_of=old.id,
        )
        new.launch(actor.to_dict())
        old.mark_retried(new.id, actor.to_dict())
        return Written(new.id, self._save(old, new))

    def duplicate_run(self, org_id: UUID, run_id: UUID, actor: Actor) -> Written:
        """A new draft with the same settings, named "<name> (copy)"."""
        old = self.get_run(org_id, run_id)
        new = Run(
            org_id=org_id,
            project_id=old.project_id,
            settings={**old.settings, "name": copy_name(old.settings["name"])},
            model=old.model,
            actor=actor.to_dict(),
            duplicate_of=old.id,
        )
        return Written(new.id, self._save(new))

    # --- runs: Merge model -----------------------------------------------------------------------------------
    def merge_run(self, org_id: UUID, run_id: UUID, actor: Actor, role: Role) -> Written:
        """Asks for the adapter to be merged into the base model; the merge job records how it went."""
        if not roles.may(role, roles.MERGE):
            raise NotAllowed(MERGE_ROLE_NEEDED)
        run = self.get_run(org_id, run_id)
        run.request_merge(actor.to_dict())
        return Written(run_id, self._save(run))

    def record_model_merged(
        self, run_id: UUID, location: str, files: list[str], size_bytes: int, actor: Actor
    ) -> Written:
        return self._progress(run_id, "model_merged", location, files, size_bytes, actor=actor)

    def record_merge_failed(self, run_id: UUID, message: str, actor: Actor) -> Written:
        return self._progress(run_id, "merge_failed", message, actor=actor)

    # --- runs: progress the jobs record --------------------------------------------------------------------
    def _progress(self, run_id: UUID, command: str, *args: Any, actor: Actor | None = None) -> Written:
        run = self.get_run(None, run_id)
        getattr(run, command)(*args, (actor or TRAINER).to_dict())
        return Written(run_id, self._save(run))

    def record_queued(self, run_id: UUID, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "mark_queued", actor=actor)

    def record_preparing(self, run_id: UUID, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "mark_preparing", actor=actor)

    def record_round_scored(self, run_id: UUID, result: RoundResult, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "score_round", result.to_dict(), actor=actor)

    def record_step_logged(self, run_id: UUID, step: StepLog, actor: Actor | None = None) -> Written:
        """An SFT or DPO run's optimizer step (the run page's loss chart and table)."""
        return self._progress(run_id, "log_step", step.to_dict(), actor=actor)

    def record_saving_adapter(self, run_id: UUID, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "save_adapter", actor=actor)

    def record_stopped(self, run_id: UUID, reason: str, note: str, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "stop_early", reason, note, actor=actor)

    def record_failed(self, run_id: UUID, message: str, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "fail", message, actor=actor)

    def record_adapter_ready(
        self,
        run_id: UUID,
        best_round: int,
        location: str,
        sha256: str,
        size_bytes: int,
        actor: Actor | None = None,
        note: str = "",
    ) -> Written:
        """`note` says in the timeline why the adapter was kept, when someone other than the trainer kept it."""
        run = self.get_run(None, run_id)
        run.adapter_is_ready(best_round, location, sha256, size_bytes, (actor or TRAINER).to_dict(), note=note)
        return Written(run_id, self._save(run))

    def record_completed(self, run_id: UUID, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "complete", actor=actor)

    def record_trial_report(self, run_id: UUID, report: TrialReport, actor: Actor | None = None) -> Written:
        return self._progress(run_id, "report_trial", report.to_dict(), actor=actor)


def _adapter_locked(draft: RunDraft, source: Run) -> dict[str, str]:
    """A rank or alpha given beside Start from that is not the source run's, refused in words."""
    advanced = source.settings["training"]["advanced"]
    given = {name: getattr(draft, name) for name in ("lora_rank", "lora_alpha") if name in draft.given}
    return adapter_locked_problems(given, source.settings["name"], advanced["lora_rank"], advanced["lora_alpha"])


def _org_of(aggregate: Aggregate) -> UUID:
    return aggregate.id if isinstance(aggregate, Organization) else aggregate.org_id  # type: ignore[attr-defined]


def _check_plan(plan: str) -> None:
    if plan not in PLANS:
        raise SettingsInvalid({"plan": "The plan must be free or pro."})
