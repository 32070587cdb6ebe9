"""The Run aggregate: a run's whole life, from draft to adapter.

A public method checks and computes; the `@event` method it calls only assigns, so nothing is checked again
when the run is rebuilt from its events (contentmanagement's split). Here: what a run is, the user's commands,
and every event's assignment. The checks before the progress the jobs record are `RunProgress`'s
(domain/runs/run_progress.py), a lost worker's resume `RunResumes`'s (domain/runs/run_resume.py), those of
Merge model `RunMerges`'s (domain/runs/merge.py); the events stay declared here, so their names in the
store (`Run.RoundScored`, ...) do not change. A run's settings are `RunSettings`
(domain/runs/run_settings.py); Saved and Edited store them as the API body, and upcast those stored before they
were typed (domain/runs/stored_settings.py).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.runs import merge, objectives
from domain.runs.alarm_watch import new_watch, watch_from_latest, watched
from domain.runs.merge import RunMerges
from domain.runs.run_alarms import RunAlarms
from domain.runs.run_progress import RunProgress
from domain.runs.run_resume import RunResumes
from domain.runs.run_settings import RunSettings
from domain.runs.states import (
    ADAPTER_READY,
    CANCELLED,
    COMPLETED,
    DELETED,
    DRAFT,
    FAILED,
    PREPARING,
    QUEUED,
    RUNNING,
    SAVING_ADAPTER,
    TRAINING,
    status_line,
)
from domain.runs.stored_settings import upcast_settings
from domain.state_events import failed_event, state_event


class Run(RunProgress, RunResumes, RunMerges, RunAlarms, Aggregate):
    # The store's snapshots of a run (domain/application.py) hold its attributes as the event methods left them,
    # with this class's topic and class_version. A change to what they assign (a new attribute, another shape)
    # must not let an older snapshot load as is: raise `class_version` here and add a static
    # `upcast_v1_v2(state)` that brings an older snapshot's state to the new shape, or, where the state can't be
    # derived from what the snapshot holds, delete the run snapshots (they are only a cache: the events rebuild the
    # same run). tests/domain/test_run_snapshots.py names the attributes, so such a change can't go unnoticed.
    class_version = 2  # 2: the alarms' watch of the last rounds and the alarms standing (domain/runs/run_alarms.py)

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A snapshot from before alarms: its watch from its latest round (the window fills again in a few
        rounds), and no alarm standing (none could have been raised)."""
        state["alarm_watch"] = watch_from_latest(state.get("latest_round"))
        state["alarms"] = {}

    class Saved(Aggregate.Created):
        org_id: UUID
        project_id: UUID
        settings: RunSettings
        model: str
        actor: dict[str, str]
        retry_of: UUID | None
        duplicate_of: UUID | None
        class_version = 2

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            upcast_settings(state, "settings")

    class Edited(Aggregate.Event):
        settings: RunSettings
        actor: dict[str, str]
        changes: list[str] | None
        class_version = 2

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            upcast_settings(state, "settings")

    class Continued(Aggregate.Event):
        """Continue from round N: the settings it goes on with (more Rounds, a new Time limit) and the checkpoint."""

        after_round: int
        checkpoint_sha256: str
        settings: RunSettings
        changes: list[str]
        actor: dict[str, str]

    @event(Saved)
    def __init__(
        self,
        org_id: UUID,
        project_id: UUID,
        settings: RunSettings,
        model: str,
        actor: dict[str, str],
        retry_of: UUID | None = None,
        duplicate_of: UUID | None = None,
    ) -> None:
        self.org_id = org_id
        self.project_id = project_id
        self.settings = settings
        self.model = model
        self.retry_of = retry_of
        self.duplicate_of = duplicate_of
        self.state = DRAFT
        # What the rules need of the rounds, not every round (those are the read models'): a run loads from its
        # latest snapshot (domain/application.py), and a snapshot of a 1,000-round run is as small as a 10-round one's.
        self.rounds_scored = 0  # the next round's number
        self.latest_round: dict[str, Any] | None = None  # the last round scored: its number and checkpoint
        self.first_trained_round: int | None = None  # the first round that trained (round 0 only validates)
        self.learned = False  # whether a trained round had a learning signal
        self.no_signal_scores: list[float] = []  # the distinct scores of the trained rounds, until one learned
        self.best_round: int | None = None
        self.best_validation: float | None = None
        self.stop: dict[str, Any] | None = None
        self.adapter: dict[str, Any] | None = None
        self.failure: str | None = None
        self.trial_report: dict[str, Any] | None = None
        self.retried_as: UUID | None = None
        self.steps: list[dict[str, Any]] = []  # SFT and DPO: one per logged optimizer step
        self.merge: dict[str, Any] | None = None  # Merge model: {"state": merging | merged | failed, ...}
        self.resumes: list[dict[str, Any]] = []  # one per Resumed: after_round, checkpoint_sha256, worker
        # what the next worker goes on from, {"round", "sha256"}: set by Resumed and Continued, None until then
        self.resume_point: dict[str, Any] | None = None
        self.segments: list[int] = []  # the round each Continue went on from
        # the alarms (domain/runs/alarms.py): what their rules keep of the last rounds, and the alarms standing
        self.alarm_watch: dict[str, Any] = new_watch()
        self.alarms: dict[str, int] = {}  # kind -> the round it was raised after

    # --- reading -------------------------------------------------------------------------------------------
    @property
    def is_trial(self) -> bool:
        return self.settings.is_trial

    @property
    def total_rounds(self) -> int:
        return self.settings.effective_rounds

    @property
    def objective(self) -> str:
        return self.settings.objective

    @property
    def status(self) -> str:
        if not objectives.is_rl(self.objective) and self.state == TRAINING and self.steps:
            return f"Training · step {self.steps[-1]['step']} / {self.steps[-1]['steps']}"
        return status_line(self.state, self.rounds_scored, self.total_rounds)

    @property
    def last_round(self) -> int | None:
        return self.rounds_scored - 1 if self.rounds_scored else None

    def _refuse(self, message: str) -> IllegalTransition:
        return IllegalTransition(message.format(status=self.status))

    def _require(self, states: tuple[str, ...], message: str) -> None:
        if self.state not in states:
            raise self._refuse(message)

    # --- the user's commands -------------------------------------------------------------------------------
    def check_editable(self) -> None:
        self._require(
            (DRAFT,), "Only a draft can be edited: this run is {status}. Duplicate it to change it."
        )

    def edit(self, settings: RunSettings, actor: dict[str, str], changes: list[str] | None = None) -> None:
        """`changes`: the labels of the settings that changed ("Rounds", "Reward"), for the timeline's words."""
        self.check_editable()
        self._edited(settings=settings, actor=actor, changes=list(changes or []))

    @event(Edited)
    def _edited(self, settings: RunSettings, actor: dict[str, str], changes: list[str] | None = None) -> None:
        self.settings = settings  # events stored before changes were named replay with None

    def delete(self, actor: dict[str, str]) -> None:
        self._require(
            (DRAFT,), "Only a draft can be deleted: this run is {status}, and its history stays on the Runs list."
        )
        self._deleted(actor=actor)

    _deleted = state_event("Deleted", DELETED)

    def launch(self, actor: dict[str, str]) -> None:
        self._require((DRAFT,), "Only a draft can be launched: this run is {status}.")
        self._launched(actor=actor)

    _launched = state_event("Launched", QUEUED)

    def cancel(self, actor: dict[str, str]) -> None:
        self._require(RUNNING, "Only a queued or running run can be cancelled: this run is {status}.")
        self._cancelled(actor=actor)

    _cancelled = state_event("Cancelled", CANCELLED)

    def check_retry(self) -> None:
        if self.state == ADAPTER_READY and self.stop is not None:
            raise self._refuse(
                "This run stopped and kept its best adapter, so it has no Retry: it is {status}. "
                "Fix the cause and configure a new run: Duplicate keeps the settings."
            )
        self._require(
            (FAILED, CANCELLED), "Only a failed or cancelled run can be retried: this run is {status}."
        )
        if self.retried_as is not None:
            raise IllegalTransition("This run was already retried: open its retry instead.")

    def mark_retried(self, new_run_id: UUID, actor: dict[str, str]) -> None:
        self.check_retry()
        self._retried(new_run_id=new_run_id, actor=actor)

    @event("Retried")
    def _retried(self, new_run_id: UUID, actor: dict[str, str]) -> None:
        self.retried_as = new_run_id

    # --- what the jobs recorded (checked by RunProgress) -------------------------------------------------------
    @event("Queued")
    def _queued(self, actor: dict[str, str]) -> None:
        pass

    @event("Preparing")
    def _preparing(self, actor: dict[str, str], resuming_from: int | None = None) -> None:
        self.state = PREPARING  # events stored before resuming existed replay with resuming_from None

    @event("RoundScored")
    def _round_scored(self, result: dict[str, Any], best_round: int, actor: dict[str, str]) -> None:
        self.rounds_scored += 1
        # the latest round for resume and Continue, without its prompts (the read models hold them): small snapshots
        self.latest_round = {key: value for key, value in result.items() if key != "prompts"}
        self.alarm_watch = watched(self.alarm_watch, result)
        if result["round_number"] >= 1 and not self.learned:
            if self.first_trained_round is None:
                self.first_trained_round = result["round_number"]
            self.learned = (result.get("signal") or 0) > 0
            score = result["uniform_value"] if result.get("uniform_value") is not None else result["reward"]
            if self.learned:
                self.no_signal_scores = []
            elif score not in self.no_signal_scores:
                self.no_signal_scores.append(score)
        self.state = TRAINING
        if best_round == result["round_number"]:
            self.best_validation = result["validation_reward"]
        self.best_round = best_round

    @event("AlarmRaised")
    def _alarm_raised(
        self, kind: str, round: int, title: str, seen: str, advice: str, actor: dict[str, str]
    ) -> None:
        self.alarms = {**self.alarms, kind: round}

    @event("AlarmCleared")
    def _alarm_cleared(self, kind: str, round: int, actor: dict[str, str]) -> None:
        self.alarms = {key: value for key, value in self.alarms.items() if key != kind}

    @event("StepLogged")
    def _step_logged(self, step: dict[str, Any], actor: dict[str, str]) -> None:
        self.steps.append(step)
        self.state = TRAINING

    @event("Stopped")
    def _stopped(
        self, reason: str, note: str, after_round: int, best_round: int, actor: dict[str, str]
    ) -> None:
        self.stop = {"reason": reason, "note": note, "after_round": after_round, "best_round": best_round}
        self.state = SAVING_ADAPTER

    _saving_adapter = state_event("SavingAdapter", SAVING_ADAPTER)

    @event("AdapterReady")
    def _adapter_ready(
        self, best_round: int, location: str, sha256: str, size_bytes: int, actor: dict[str, str], note: str = ""
    ) -> None:  # events stored before notes existed replay with note ""
        self.adapter = {
            "best_round": best_round,
            "location": location,
            "sha256": sha256,
            "size_bytes": size_bytes,
        }
        self.state = ADAPTER_READY

    _completed = state_event("Completed", COMPLETED)
    _failed = failed_event(FAILED)

    @event("Resumed")
    def _resumed(self, after_round: int, checkpoint_sha256: str, worker: str, actor: dict[str, str]) -> None:
        self.resumes.append({"after_round": after_round, "checkpoint_sha256": checkpoint_sha256, "worker": worker})
        self.resume_point = {"round": after_round, "sha256": checkpoint_sha256}
        # SFT, DPO and Head: the steps after the epoch's checkpoint are redone (RL records a round with its checkpoint)
        self.steps = [step for step in self.steps if step["step"] <= after_round]
        self.state = QUEUED

    @event(Continued)
    def _continued(
        self, after_round: int, checkpoint_sha256: str, settings: RunSettings, changes: list[str], actor: dict[str, str]
    ) -> None:
        self.settings = settings
        self.resume_point = {"round": after_round, "sha256": checkpoint_sha256}
        self.segments.append(after_round)
        self.stop = None  # the adapter kept so far stays until the new segment keeps its own
        self.state = QUEUED

    @event("TrialReported")
    def _trial_reported(self, report: dict[str, Any], actor: dict[str, str]) -> None:
        self.trial_report = report

    # --- Merge model: a job merges the kept adapter into the base model (checked by RunMerges) -----------------
    @event("MergeRequested")
    def _merge_requested(self, best_round: int, actor: dict[str, str]) -> None:
        self.merge = {"state": merge.MERGING, "best_round": best_round}

    @event("ModelMerged")
    def _model_merged(self, location: str, files: list[str], size_bytes: int, actor: dict[str, str]) -> None:
        assert self.merge is not None
        self.merge = {**self.merge, "state": merge.MERGED, "location": location, "files": files,
                      "size_bytes": size_bytes}

    @event("MergeFailed")
    def _merge_failed(self, message: str, actor: dict[str, str]) -> None:
        assert self.merge is not None
        self.merge = {**self.merge, "state": merge.MERGE_FAILED, "message": message}
