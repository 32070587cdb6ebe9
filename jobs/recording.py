"""Each progress record of the trainer becomes a domain command, in order, so every step is an event with its time.

A command is tried against the run as it is now: one that no longer applies (the run was cancelled meanwhile, or
the record repeats one already recorded) changes nothing, and a write that raced another one (or met a database
out of reach for a moment) is tried again on the fresh run, by the one rule of jobs/retrying.py. So a record is
never recorded twice and a cancel is never overwritten.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from uuid import UUID

from domain.actors import TRAINER, Actor
from domain.application import Verity
from domain.runs.progress import RoundResult, StepLog, TrialReport
from domain.runs.run import ADAPTER_READY, PREPARING, RUNNING, SAVING_ADAPTER, TRAINING, Run
from jobs import retrying
from trainer import progress

log = logging.getLogger(__name__)


def with_fresh_run(verity: Verity, run_id: UUID, command: Callable[[Run], object]) -> bool:
    """Run `command(run)` on the run as it is now, by the jobs' one rule for retrying (jobs/retrying.py); False
    when it no longer applies."""
    return retrying.record(lambda: command(verity.get_run(None, run_id)), f"run {run_id}")


def round_result(record: progress.RoundScored) -> RoundResult:
    seconds = record.seconds
    return RoundResult(
        round_number=record.round,
        validation_reward=record.validation_reward,
        reward=record.reward,
        signal=record.signal,
        cut_off=record.cut_off,
        metric_failures=record.metric_failures,
        graded_answers=record.graded_answers,
        updated=record.updated,
        loss=record.loss,
        sampling_seconds=seconds.sampling,
        grading_seconds=seconds.grading,
        update_seconds=seconds.update,
        validation_seconds=seconds.validation,
        mean_answer_tokens=record.mean_answer_tokens,
        token_entropy=record.token_entropy,
        peak_memory_bytes=record.peak_memory_bytes,
        accuracy=record.accuracy,
        checkpoint_sha256=record.checkpoint_sha256,
        checkpoint_seconds=record.checkpoint_seconds,
        clipped=record.clipped,
        grad_norm=record.grad_norm,
        passes=record.passes,
        failures_by_kind=record.failures_by_kind,
        sandbox_batches=record.sandbox_batches,
        grading_seconds_median=record.grading_seconds_median,
        grading_seconds_p95=record.grading_seconds_p95,
        prompts=record.prompts,
        # every answer of a round that taught nothing scored alike, so their mean is that score
        uniform_value=record.reward if record.round > 0 and not record.signal else None,
    )


def trial_report(record: progress.TrialReport, error: str | None) -> TrialReport:
    checked = int(record.formatting.get("prompts_checked", 0))
    problems = list(record.formatting.get("problems", []))
    formatting = problems[0] if problems else f"{checked} of {checked} prompts well formed"
    seconds = record.seconds
    return TrialReport(
        finished=record.finished,
        formatting=formatting,
        seconds_per_round=record.seconds_per_round,
        peak_memory_bytes=record.peak_memory_bytes,
        gpu_memory_bytes=record.memory_total_bytes,
        sampling_seconds=seconds.sampling if record.finished else None,
        grading_seconds=seconds.grading if record.finished else None,
        update_seconds=seconds.update if record.finished else None,
        validation_seconds=seconds.validation if record.finished else None,
        full_training_seconds=record.full_training_seconds,
        full_training_rounds=record.full_training_rounds,
        full_gpu_cost=record.full_gpu_cost,
        advice=list(record.advice),
        error=error,
    )


class ProgressRecorder:
    """Turns one run's progress records into commands on the Verity application."""

    def __init__(self, verity: Verity, run_id: UUID, actor: Actor = TRAINER) -> None:
        self.verity = verity
        self.run_id = run_id
        self.actor = actor
        self.failure: str | None = None
        self.finished = False  # the trainer said how the run ended (completed or failed)

    def _apply(self, command: Callable[[Run], object]) -> bool:
        return with_fresh_run(self.verity, self.run_id, command)

    def record_line(self, data: dict[str, Any]) -> None:
        """One line of the trainer's stdout (the supervisor's `Records`)."""
        try:
            record = progress.record_from_dict(data)
        except (KeyError, TypeError, ValueError):
            log.warning("run %s: not a progress record: %s", self.run_id, str(data)[:300])
            return
        self.record(record)

    def record(self, record: progress.ProgressRecord) -> None:
        v, run_id, actor = self.verity, self.run_id, self.actor
        match record:
            case progress.Prepared():
                log.info("run %s prepared: %s training rows, %s validation prompts in %.1f s", run_id,
                         record.train_rows, record.validation_prompts, record.seconds)
            case progress.RoundScored():
                self._apply(lambda run: v.record_round_scored(run_id, round_result(record), actor))
            case progress.StepLogged():
                step = StepLog(record.step, record.steps, record.epoch, record.loss, record.seconds,
                               record.validation_loss, record.checkpoint_sha256)
                self._apply(lambda run: v.record_step_logged(run_id, step, actor))
            case progress.Stopped():
                self._apply(lambda run: v.record_stopped(run_id, record.reason, record.note or "", actor))
            case progress.AdapterSaved():
                self._apply(lambda run: self._adapter_saved(run, record))
            case progress.TrialReport():
                self._apply(lambda run: v.record_trial_report(run_id, trial_report(record, self.failure), actor))
            case progress.Failed():
                self.failure = record.message
                self.finished = True
                self._apply(lambda run: v.record_failed(run_id, record.message, actor))
            case progress.Completed():
                self.finished = True
                self._apply(self._completed)

    def _adapter_saved(self, run: Run, record: progress.AdapterSaved) -> None:
        if run.is_trial:  # a trial's adapter is only a check: its report says how it went
            return
        if run.state in (TRAINING, PREPARING):  # PREPARING: resumed after its last round, nothing left to train
            self.verity.record_saving_adapter(self.run_id, self.actor)
            run = self.verity.get_run(None, self.run_id)  # saving may have recorded a no-signal failure instead
            if run.state != SAVING_ADAPTER:
                return
        self.verity.record_adapter_ready(
            self.run_id, record.best_round, record.location, record.sha256, record.size_bytes, self.actor
        )

    def _completed(self, run: Run) -> None:
        """All rounds done: Completed. A run that stopped early stays Adapter ready; a trial completes."""
        if run.is_trial:
            if run.state in RUNNING:
                self.verity.record_completed(self.run_id, self.actor)
            return
        if run.state == ADAPTER_READY and run.stop is None:
            self.verity.record_completed(self.run_id, self.actor)
