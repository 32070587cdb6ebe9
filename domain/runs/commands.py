"""The Verity application's run commands: the user's (save, edit, launch, retry, merge ...) and the progress the
jobs record (a mixin of `domain.application.Verity`).

It uses the application's `_save`, `get_organization`, `get_project` and `get_run`; a draft's settings are checked
by `DraftChecks` (domain/runs/draft_checks.py), which takes a baseline's reward from the evaluations' mixin.
- `retry_run` takes `role` too (default "owner": its caller already passed the page's role check); a retry
  saves and launches the new run at once, linked to the old one (`retry_of` / `retried_as`).
- Progress commands take an optional `actor` (default: the Trainer system actor).
- `record_saving_adapter` and `record_adapter_ready` record a failure instead when no round had a
  learning signal (000: "the run fails instead of completing"); the position is then that failure's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal
from uuid import UUID

from domain.access import roles
from domain.access.roles import MERGE_ROLE_NEEDED, ROLE_NEEDED
from domain.actors import TRAINER, Actor
from domain.errors import ConcurrentChange, IllegalTransition, NotAllowed, NotReady, PlanNeeded, SettingsInvalid
from domain.runs import objectives
from domain.runs.draft_checks import DraftChecks
from domain.runs.drafts import changed_settings, copy_name
from domain.runs.progress import RoundResult, StepLog, TrialReport
from domain.runs.run import Run
from domain.runs.run_settings import FIELDS_BY_NAME, RunSettings
from domain.runs.states import DRAFT
from domain.written import Written

Role = Literal["owner", "member", "viewer"]

PRO_PLAN_NEEDED = (
    "RL training is on the Pro plan. An owner can change the plan under Settings → Plan and billing."
)
AGENT_NEEDS_BASELINE = (
    "start_training takes its reward from a completed baseline evaluation of the run's dataset version: name one "
    "(list_baselines shows them)."
)


CANCEL_ATTEMPTS = 5


def _words(value: Any) -> str:
    """A setting's value as the timeline writes it: 30, 2.5."""
    return f"{value:g}" if isinstance(value, float) else str(value)


class RunCommands(DraftChecks):
    # provided by Verity
    _save: Any
    get_organization: Any
    get_project: Any
    get_run: Any

    # --- the user's commands -------------------------------------------------------------------------------
    def save_run(self, org_id: UUID, project_id: UUID, draft: RunSettings, actor: Actor) -> Written:
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

    def edit_run(self, org_id: UUID, run_id: UUID, draft: RunSettings, actor: Actor) -> Written:
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
        draft: RunSettings,
        actor: Actor,
        role: Role,
        readiness: Callable[[RunSettings], str | None] | None = None,
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
        """A cancel wins over a round being recorded at the same moment: it is read again and asked again, a few
        times, rather than refused as someone else's change (the trainer records rounds every few seconds)."""
        for attempt in range(CANCEL_ATTEMPTS):
            run = self.get_run(org_id, run_id)
            run.cancel(actor.to_dict())
            try:
                return Written(run_id, self._save(run))
            except ConcurrentChange:
                if attempt == CANCEL_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

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

    def continue_run(
        self, org_id: UUID, run_id: UUID, actor: Actor, role: Role = "owner", changes: dict[str, Any] | None = None,
        not_ready: str | None = None,
    ) -> Written:
        """Continue from round N: the same run goes back on its queue and its next worker goes on from the
        checkpoint of its last finished round, as a new segment. `changes`: a new Rounds or Time limit (hours),
        checked (domain/runs/settings.py's continue_changes); its Time limit counts from now. Refused as a launch
        is (plan, role, readiness), and when the run was not stopped by its time limit or memory, or cancelled."""
        run = self.get_run(org_id, run_id)
        if (refusal := run.continue_refusal()) is not None:
            raise IllegalTransition(refusal)
        self._check_may_launch(org_id, role, run.objective)
        if not_ready:
            raise NotReady(not_ready)
        settings = run.settings.with_values(**(changes or {}))
        changed = [
            f"{FIELDS_BY_NAME[name].label} {_words(getattr(run.settings, name))} → {_words(getattr(settings, name))}"
            for name in sorted(changes or {}) if getattr(run.settings, name) != getattr(settings, name)
        ]
        run.continue_from_last_round(settings, changed, actor.to_dict())
        return Written(run_id, self._save(run))

    def duplicate_run(self, org_id: UUID, run_id: UUID, actor: Actor) -> Written:
        """A new draft with the same settings, named "<name> (copy)"."""
        old = self.get_run(org_id, run_id)
        new = Run(
            org_id=org_id,
            project_id=old.project_id,
            settings=old.settings.with_values(name=copy_name(old.settings.name)),
            model=old.model,
            actor=actor.to_dict(),
            duplicate_of=old.id,
        )
        return Written(new.id, self._save(new))

    # --- Merge model -----------------------------------------------------------------------------------------
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

    # --- progress the jobs record --------------------------------------------------------------------------
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

    def record_quiet(
        self, run_id: UUID, quiet_seconds: float, since: str, actor: Actor | None = None, at_least: float = 0.0
    ) -> Written:
        """The reconciler heard no round and no heartbeat for `quiet_seconds` (since `since`, in words): the quiet
        run's alarm when its rule holds (domain/runs/alarms.py; never under `at_least`), else nothing is recorded."""
        run = self.get_run(None, run_id)
        run.report_quiet(quiet_seconds, since, (actor or TRAINER).to_dict(), at_least)
        return Written(run_id, self._save(run))

    def record_resumed(self, run_id: UUID, worker: str, actor: Actor | None = None) -> Written:
        """The run's worker was lost: back on its queue, to go on from its last finished round's checkpoint."""
        return self._progress(run_id, "resume_after_lost_worker", worker, actor=actor)

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
