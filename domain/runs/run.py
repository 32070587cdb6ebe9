"""The Run aggregate: an RL run's whole life, from draft to adapter.

A public method checks and computes; the `@event` method it calls only assigns, so nothing is checked again
when the run is rebuilt from its events (contentmanagement's split).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.errors import IllegalTransition
from domain.runs import merge, messages, objectives

DRAFT, QUEUED, PREPARING, TRAINING = "draft", "queued", "preparing", "training"
SAVING_ADAPTER, ADAPTER_READY, COMPLETED, FAILED, CANCELLED = (
    "saving_adapter",
    "adapter_ready",
    "completed",
    "failed",
    "cancelled",
)
DELETED = "deleted"  # a draft taken off the Runs list; the event store keeps its history
STATUS_NAMES = {
    DRAFT: "Draft",
    QUEUED: "Queued",
    PREPARING: "Preparing",
    TRAINING: "Training",
    SAVING_ADAPTER: "Saving adapter",
    ADAPTER_READY: "Adapter ready",
    COMPLETED: "Completed",
    FAILED: "Failed",
    CANCELLED: "Cancelled",
    DELETED: "Deleted",
}
RUNNING = (QUEUED, PREPARING, TRAINING, SAVING_ADAPTER)
FINISHED_WITH_ADAPTER = (ADAPTER_READY, COMPLETED)


def status_line(state: str, rounds_scored: int, total_rounds: int) -> str:
    """ "Training · round 3 / 20" while it trains (the round in progress), else the state's name."""
    if state == TRAINING:
        return f"Training · round {min(max(rounds_scored, 1), total_rounds)} / {total_rounds}"
    return STATUS_NAMES[state]


class Run(Aggregate):
    @event("Saved")
    def __init__(
        self,
        org_id: UUID,
        project_id: UUID,
        settings: dict[str, Any],
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
        self.rounds: list[dict[str, Any]] = []
        self.best_round: int | None = None
        self.best_validation: float | None = None
        self.stop: dict[str, Any] | None = None
        self.adapter: dict[str, Any] | None = None
        self.failure: str | None = None
        self.trial_report: dict[str, Any] | None = None
        self.retried_as: UUID | None = None
        self.steps: list[dict[str, Any]] = []  # SFT and DPO: one per logged optimizer step
        self.merge: dict[str, Any] | None = None  # Merge model: {"state": merging | merged | failed, ...}

    # --- reading -------------------------------------------------------------------------------------------
    @property
    def is_trial(self) -> bool:
        return self.settings["kind"] == "trial"

    @property
    def total_rounds(self) -> int:
        return 1 if self.is_trial else int(self.settings["training"]["rl"]["rounds"])

    @property
    def objective(self) -> str:
        return str(self.settings["training"].get("objective", objectives.RL))

    @property
    def status(self) -> str:
        if not objectives.is_rl(self.objective) and self.state == TRAINING and self.steps:
            return f"Training · step {self.steps[-1]['step']} / {self.steps[-1]['steps']}"
        return status_line(self.state, len(self.rounds), self.total_rounds)

    @property
    def last_round(self) -> int | None:
        return len(self.rounds) - 1 if self.rounds else None

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

    def edit(self, settings: dict[str, Any], actor: dict[str, str], changes: list[str] | None = None) -> None:
        """`changes`: the labels of the settings that changed ("Rounds", "Reward"), for the timeline's words."""
        self.check_editable()
        self._edited(settings=settings, actor=actor, changes=list(changes or []))

    @event("Edited")
    def _edited(self, settings: dict[str, Any], actor: dict[str, str], changes: list[str] | None = None) -> None:
        self.settings = settings  # events stored before changes were named replay with None

    def delete(self, actor: dict[str, str]) -> None:
        self._require(
            (DRAFT,), "Only a draft can be deleted: this run is {status}, and its history stays on the Runs list."
        )
        self._deleted(actor=actor)

    @event("Deleted")
    def _deleted(self, actor: dict[str, str]) -> None:
        self.state = DELETED

    def launch(self, actor: dict[str, str]) -> None:
        self._require((DRAFT,), "Only a draft can be launched: this run is {status}.")
        self._launched(actor=actor)

    @event("Launched")
    def _launched(self, actor: dict[str, str]) -> None:
        self.state = QUEUED

    def cancel(self, actor: dict[str, str]) -> None:
        self._require(RUNNING, "Only a queued or running run can be cancelled: this run is {status}.")
        self._cancelled(actor=actor)

    @event("Cancelled")
    def _cancelled(self, actor: dict[str, str]) -> None:
        self.state = CANCELLED

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

    # --- progress that the jobs record ---------------------------------------------------------------------
    def mark_queued(self, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "Only a launched run can be put on a queue: this run is {status}.")
        self._queued(actor=actor)

    @event("Queued")
    def _queued(self, actor: dict[str, str]) -> None:
        pass

    def mark_preparing(self, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "Only a queued run can start preparing: this run is {status}.")
        self._preparing(actor=actor)

    @event("Preparing")
    def _preparing(self, actor: dict[str, str]) -> None:
        self.state = PREPARING

    def score_round(self, result: dict[str, Any], actor: dict[str, str]) -> None:
        expected = len(self.rounds)
        self._require(
            (PREPARING, TRAINING), "Only a preparing or training run can score a round: it is {status}."
        )
        if result["round_number"] != expected:
            raise IllegalTransition(
                f"Round {result['round_number']} can't be scored now: the next round of this "
                f"run is round {expected}."
            )
        if expected > self.total_rounds:
            raise IllegalTransition(
                f"This run has {self.total_rounds} rounds: round {expected} can't be scored."
            )
        improved = self.best_validation is None or result["validation_reward"] > self.best_validation
        best_round = expected if improved else self.best_round
        self._round_scored(result=result, best_round=best_round, actor=actor)

    @event("RoundScored")
    def _round_scored(self, result: dict[str, Any], best_round: int, actor: dict[str, str]) -> None:
        self.rounds.append(result)
        self.state = TRAINING
        if best_round == result["round_number"]:
            self.best_validation = result["validation_reward"]
        self.best_round = best_round

    def log_step(self, step: dict[str, Any], actor: dict[str, str]) -> None:
        """An SFT or DPO optimizer step (domain/runs/progress.py's StepLog), in order."""
        if objectives.is_rl(self.objective):
            raise IllegalTransition("An RL run scores rounds: it logs no SFT or DPO steps.")
        self._require((PREPARING, TRAINING), "Only a preparing or training run can log a step: it is {status}.")
        if self.steps and step["step"] <= self.steps[-1]["step"]:
            raise IllegalTransition(f"Step {step['step']} is already logged: this run is at step "
                                    f"{self.steps[-1]['step']}.")
        self._step_logged(step=step, actor=actor)

    @event("StepLogged")
    def _step_logged(self, step: dict[str, Any], actor: dict[str, str]) -> None:
        self.steps.append(step)
        self.state = TRAINING

    def stop_early(self, reason: str, note: str, actor: dict[str, str]) -> None:
        """The time limit, metric failures or memory end a full run that has an adapter to keep."""
        if reason not in messages.STOP_REASONS:
            raise IllegalTransition(
                f"Unknown stop reason {reason!r}: use time_limit, metric_failures or out_of_memory."
            )
        if self.is_trial:
            raise IllegalTransition(
                "A trial does not stop with an adapter: its one round is what it measures, so "
                "it fails instead."
            )
        self._require(
            (TRAINING,),
            "Only a run that scored its starting adapter can stop and keep it: this run "
            "is {status}, so record a failure instead.",
        )
        after, best = self.last_round, self.best_round
        if not objectives.is_rl(self.objective):  # SFT and DPO stop after a step and keep its adapter
            after = best = self.steps[-1]["step"] if self.steps else 0
        self._stopped(reason=reason, note=note, after_round=after, best_round=best, actor=actor)

    @event("Stopped")
    def _stopped(
        self, reason: str, note: str, after_round: int, best_round: int, actor: dict[str, str]
    ) -> None:
        self.stop = {"reason": reason, "note": note, "after_round": after_round, "best_round": best_round}
        self.state = SAVING_ADAPTER

    def no_learning_signal(self) -> str | None:
        """The failure message when every round trained on nothing, else None."""
        trained = [r for r in self.rounds if r["round_number"] >= 1]
        if self.stop is not None or not trained or any((r.get("signal") or 0) > 0 for r in trained):
            return None
        values = [r["uniform_value"] if r.get("uniform_value") is not None else r["reward"] for r in trained]
        return messages.no_learning_signal(trained[0]["round_number"], trained[-1]["round_number"], values)

    def save_adapter(self, actor: dict[str, str]) -> None:
        self._require((TRAINING,), "Only a training run can start saving its adapter: this run is {status}.")
        if not objectives.is_rl(self.objective):  # SFT and DPO keep the adapter of their last step
            self._saving_adapter(actor=actor)
            return
        if self.last_round is None or self.last_round < 1:
            raise IllegalTransition(
                "A run saves its adapter once it has trained a round: this run trained none."
            )
        if (failure := self.no_learning_signal()) is not None:
            self._failed(message=failure, actor=actor)
            return
        self._saving_adapter(actor=actor)

    @event("SavingAdapter")
    def _saving_adapter(self, actor: dict[str, str]) -> None:
        self.state = SAVING_ADAPTER

    def adapter_is_ready(
        self, best_round: int, location: str, sha256: str, size_bytes: int, actor: dict[str, str], note: str = ""
    ) -> None:
        """`note`: why the adapter was kept when that is news (the reconciler kept a dead worker's saved adapter)."""
        self._require(
            (TRAINING, SAVING_ADAPTER),
            "Only a run saving its adapter can have it ready: this run is {status}.",
        )
        if objectives.is_rl(self.objective) and best_round != self.best_round:
            raise IllegalTransition(
                f"The adapter to keep is round {self.best_round}'s, the best on validation, "
                f"not round {best_round}'s."
            )
        is_rl = objectives.is_rl(self.objective)
        if is_rl and self.state == TRAINING and (failure := self.no_learning_signal()) is not None:
            self._failed(message=failure, actor=actor)
            return
        self._adapter_ready(
            best_round=best_round, location=location, sha256=sha256, size_bytes=size_bytes, actor=actor, note=note
        )

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

    def complete(self, actor: dict[str, str]) -> None:
        if self.is_trial and self.trial_report is not None and self.state in (TRAINING, SAVING_ADAPTER):
            self._completed(actor=actor)
            return
        self._require(
            (ADAPTER_READY,), "Only a run whose adapter is ready can complete: this run is {status}."
        )
        self._completed(actor=actor)

    @event("Completed")
    def _completed(self, actor: dict[str, str]) -> None:
        self.state = COMPLETED

    def fail(self, message: str, actor: dict[str, str]) -> None:
        self._require(RUNNING, "Only a queued or running run can fail: this run is {status}.")
        self._failed(message=message, actor=actor)

    @event("Failed")
    def _failed(self, message: str, actor: dict[str, str]) -> None:
        self.failure = message
        self.state = FAILED

    def report_trial(self, report: dict[str, Any], actor: dict[str, str]) -> None:
        if not self.is_trial:
            raise IllegalTransition("Only a trial has a Training trial report.")
        self._require(
            (PREPARING, TRAINING, SAVING_ADAPTER, FAILED),
            "A trial reports while it runs or once it failed: this one is {status}.",
        )
        self._trial_reported(report=report, actor=actor)

    @event("TrialReported")
    def _trial_reported(self, report: dict[str, Any], actor: dict[str, str]) -> None:
        self.trial_report = report

    # --- Merge model: a job merges the kept adapter into the base model -------------------------------------
    def request_merge(self, actor: dict[str, str]) -> None:
        if self.state not in FINISHED_WITH_ADAPTER or self.adapter is None:
            raise IllegalTransition(merge.NOT_READY)
        if self.merge is not None and self.merge["state"] == merge.MERGING:
            raise IllegalTransition(merge.UNDER_WAY)
        if self.merge is not None and self.merge["state"] == merge.MERGED:
            raise IllegalTransition(merge.already_merged(self.merge["location"]))
        self._merge_requested(best_round=self.adapter["best_round"], actor=actor)

    @event("MergeRequested")
    def _merge_requested(self, best_round: int, actor: dict[str, str]) -> None:
        self.merge = {"state": merge.MERGING, "best_round": best_round}

    def _require_merging(self) -> None:
        if self.merge is None or self.merge["state"] != merge.MERGING:
            raise IllegalTransition(merge.NOT_ASKED)

    def model_merged(self, location: str, files: list[str], size_bytes: int, actor: dict[str, str]) -> None:
        self._require_merging()
        self._model_merged(location=location, files=files, size_bytes=size_bytes, actor=actor)

    @event("ModelMerged")
    def _model_merged(self, location: str, files: list[str], size_bytes: int, actor: dict[str, str]) -> None:
        assert self.merge is not None
        self.merge = {**self.merge, "state": merge.MERGED, "location": location, "files": files,
                      "size_bytes": size_bytes}

    def merge_failed(self, message: str, actor: dict[str, str]) -> None:
        self._require_merging()
        self._merge_failed(message=message, actor=actor)

    @event("MergeFailed")
    def _merge_failed(self, message: str, actor: dict[str, str]) -> None:
        assert self.merge is not None
        self.merge = {**self.merge, "state": merge.MERGE_FAILED, "message": message}
