"""The progress of a launched run as the jobs record it: the check before each of the Run's progress events.

A mixin of the Run aggregate (domain/runs/run.py). A method here checks and computes, then calls the Run's
`@event` method, which only assigns: the events stay declared on the Run (`Run.RoundScored`, ...), so their names
in the store do not change, and nothing here runs again when a run is rebuilt from its events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from domain.errors import IllegalTransition
from domain.runs import messages, objectives
from domain.runs.states import ADAPTER_READY, FAILED, PREPARING, QUEUED, RUNNING, SAVING_ADAPTER, TRAINING

Recorder = Callable[..., None]


class RunProgress:
    # provided by Run: its state, what it reads of it, and the @event methods that record each step
    state: str
    rounds_scored: int
    latest_round: dict[str, Any] | None
    first_trained_round: int | None
    learned: bool
    no_signal_scores: list[float]
    steps: list[dict[str, Any]]
    best_round: int | None
    best_validation: float | None
    stop: dict[str, Any] | None
    trial_report: dict[str, Any] | None
    _require: Callable[[tuple[str, ...], str], None]
    _queued: Recorder
    _preparing: Recorder
    _round_scored: Recorder
    _step_logged: Recorder
    _stopped: Recorder
    _saving_adapter: Recorder
    _adapter_ready: Recorder
    _completed: Recorder
    _failed: Recorder
    _trial_reported: Recorder
    sound_alarms: Callable[[dict[str, str]], None]  # RunAlarms's (domain/runs/run_alarms.py)

    if TYPE_CHECKING:  # read-only properties of Run (a plain annotation here would make them writeable)

        @property
        def is_trial(self) -> bool: ...
        @property
        def objective(self) -> str: ...
        @property
        def total_rounds(self) -> int: ...
        @property
        def last_round(self) -> int | None: ...
        @property
        def resuming_from(self) -> int | None: ...

    def mark_queued(self, actor: dict[str, str]) -> None:
        self._require((QUEUED,), "Only a launched run can be put on a queue: this run is {status}.")
        self._queued(actor=actor)

    def mark_preparing(self, actor: dict[str, str]) -> None:
        """After a Resumed or Continued, the event names the round the worker goes on from (the timeline says so)."""
        self._require((QUEUED,), "Only a queued run can start preparing: this run is {status}.")
        self._preparing(actor=actor, resuming_from=self.resuming_from)

    def score_round(self, result: dict[str, Any], actor: dict[str, str]) -> None:
        expected = self.rounds_scored
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
        self.sound_alarms(actor)  # each alarm that starts or stops holding is an event after the round's

    def _training_states(self) -> tuple[str, ...]:
        """A resumed run that prepared may stop or save before its next round (its time limit, or a worker lost
        after the last round): it trained already."""
        trained = self.rounds_scored or self.steps
        return (PREPARING, TRAINING) if self.resuming_from is not None and trained else (TRAINING,)

    def log_step(self, step: dict[str, Any], actor: dict[str, str]) -> None:
        """An SFT or DPO optimizer step (domain/runs/progress.py's StepLog), in order."""
        if objectives.is_rl(self.objective):
            raise IllegalTransition("An RL run scores rounds: it logs no SFT or DPO steps.")
        self._require((PREPARING, TRAINING), "Only a preparing or training run can log a step: it is {status}.")
        if self.steps and step["step"] <= self.steps[-1]["step"]:
            raise IllegalTransition(f"Step {step['step']} is already logged: this run is at step "
                                    f"{self.steps[-1]['step']}.")
        self._step_logged(step=step, actor=actor)

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
            self._training_states(),
            "Only a run that scored its starting adapter can stop and keep it: this run "
            "is {status}, so record a failure instead.",
        )
        after, best = self.last_round, self.best_round
        if not objectives.is_rl(self.objective):  # SFT and DPO stop after a step and keep its adapter
            after = best = self.steps[-1]["step"] if self.steps else 0
        self._stopped(reason=reason, note=note, after_round=after, best_round=best, actor=actor)

    def no_learning_signal(self) -> str | None:
        """The failure message when every round trained on nothing, else None."""
        if self.stop is not None or self.first_trained_round is None or self.learned:
            return None
        assert self.latest_round is not None  # a round was trained
        return messages.no_learning_signal(
            self.first_trained_round, self.latest_round["round_number"],
            messages.scores_in_words(self.no_signal_scores),
        )

    def save_adapter(self, actor: dict[str, str]) -> None:
        self._require(
            self._training_states(), "Only a training run can start saving its adapter: this run is {status}."
        )
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

    def complete(self, actor: dict[str, str]) -> None:
        if self.is_trial and self.trial_report is not None and self.state in (TRAINING, SAVING_ADAPTER):
            self._completed(actor=actor)
            return
        self._require(
            (ADAPTER_READY,), "Only a run whose adapter is ready can complete: this run is {status}."
        )
        self._completed(actor=actor)

    def fail(self, message: str, actor: dict[str, str]) -> None:
        self._require(RUNNING, "Only a queued or running run can fail: this run is {status}.")
        self._failed(message=message, actor=actor)

    def report_trial(self, report: dict[str, Any], actor: dict[str, str]) -> None:
        if not self.is_trial:
            raise IllegalTransition("Only a trial has a Training trial report.")
        self._require(
            (PREPARING, TRAINING, SAVING_ADAPTER, FAILED),
            "A trial reports while it runs or once it failed: this one is {status}.",
        )
        self._trial_reported(report=report, actor=actor)
