"""Resuming a run from the checkpoint of its last finished round (trainer/checkpoint.py), redoing the round that
was in progress: by itself when its worker was lost (`Resumed`), or when someone continues a run that was stopped by
its time limit or out of memory, or cancelled (`Continued`: "Continue from round N", optionally with more rounds or a
new time limit). Either way it is the same run: its rounds go on from N + 1, in the same rounds table and chart.

An SFT, DPO or Head run resumes too when its worker is lost, from the checkpoint of its last finished epoch: the
step that ended it is the point it goes on from, and the steps logged after it are redone (the run's steps are
taken back to that step; the event store keeps what was logged). A trial is never resumed: its one round or epoch
is what it measures, and Retry runs it again.

A mixin of the Run aggregate (domain/runs/run.py), like RunProgress: the checks are here, the `Resumed` and
`Continued` events stay declared on the Run. A run lost before its first checkpoint (round 1's, or its first
epoch's) fails as before, and Retry starts it again. The same point is resumed from at most MAX_RESUMES_OF_A_ROUND
times: a worker lost again and again at one round is a cause to look at, not to repeat. Continue is for full RL
runs: an SFT, DPO or Head run stopped by its time limit keeps the adapter of its last step, and Retry trains again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from domain.errors import IllegalTransition
from domain.runs import messages, objectives
from domain.runs.states import ADAPTER_READY, CANCELLED, PREPARING, STATUS_NAMES, TRAINING

MAX_RESUMES_OF_A_ROUND = 3
CONTINUABLE_STOPS = ("time_limit", "out_of_memory")  # metric failures would stop it again: fix the metric first


def unit_of(objective: str) -> str:
    """What a run counts and resumes after: an RL run's rounds, an SFT, DPO or Head run's optimizer steps."""
    return "round" if objectives.is_rl(objective) else "step"


def resumed_sentence(worker: str, after: int, unit: str = "round") -> str:
    """The timeline's words for a Run.Resumed event.

    >>> resumed_sentence("The worker (gpu-7, process 4242)", 12)
    'The worker (gpu-7, process 4242) stopped after round 12; the run went back on its queue to resume from round \
12.'
    >>> resumed_sentence("The worker (gpu-7, process 4242)", 40, "step")
    'The worker (gpu-7, process 4242) stopped after step 40; the run went back on its queue to resume from step 40.'
    """
    return f"{worker} stopped after {unit} {after}; the run went back on its queue to resume from {unit} {after}."


def gave_up_words(after: int, unit: str = "round") -> str:
    return (
        f"It was resumed from {unit} {after} {MAX_RESUMES_OF_A_ROUND} times and its worker was lost each time, "
        "so it was not resumed again."
    )


def continued_sentence(who: str, after_round: int, changes: list[str]) -> str:
    """The timeline's words for a Run.Continued event.

    >>> continued_sentence("Ana", 12, ["Rounds 20 → 30"])
    'Ana continued the run from round 12 (Rounds 20 → 30); it went back on its queue.'
    >>> continued_sentence("Ana", 12, [])
    'Ana continued the run from round 12; it went back on its queue.'
    """
    changed = f" ({', '.join(changes)})" if changes else ""
    return f"{who} continued the run from round {after_round}{changed}; it went back on its queue."


def resumed_on_worker_sentence(who: str, after: int, unit: str = "round") -> str:
    """The timeline's words for the Preparing that follows a Resumed or Continued: the worker that took it on.

    >>> resumed_on_worker_sentence("Worker gpu-8 (process 77)", 12)
    'The run resumed from round 12 on Worker gpu-8 (process 77): GPU, model and the checkpoint of round 12.'
    """
    return f"The run resumed from {unit} {after} on {who}: GPU, model and the checkpoint of {unit} {after}."


class RunResumes:
    # provided by Run
    state: str
    latest_round: dict[str, Any] | None
    steps: list[dict[str, Any]]
    resumes: list[dict[str, Any]]
    resume_point: dict[str, Any] | None
    stop: dict[str, Any] | None
    retried_as: Any
    _resumed: Callable[..., None]
    _continued: Callable[..., None]

    if TYPE_CHECKING:

        @property
        def is_trial(self) -> bool: ...
        @property
        def objective(self) -> str: ...

    @property
    def resume_from(self) -> dict[str, Any] | None:
        """What the next launch continues from, {"round", "sha256"}: the last Resumed or Continued event's
        checkpoint; None for a run launched from its draft."""
        return self.resume_point

    def _last_checkpoint(self) -> tuple[int, str] | None:
        """(round or step, checkpoint sha256) of the last point a run can go on from: an RL run's last round (each
        round after round 0 leaves one), an SFT, DPO or Head run's last step that ended an epoch."""
        if objectives.is_rl(self.objective):
            last = self.latest_round
            if last is None or last["round_number"] < 1 or not last.get("checkpoint_sha256"):
                return None
            return last["round_number"], last["checkpoint_sha256"]
        ended_epochs = [step for step in self.steps if step.get("checkpoint_sha256")]
        return (ended_epochs[-1]["step"], ended_epochs[-1]["checkpoint_sha256"]) if ended_epochs else None

    def resume_refusal(self) -> str | None:
        """Why this run can't resume now, in words; None when it can."""
        if self.is_trial:
            return "A trial is not resumed: Retry runs it again."
        if self.state not in (PREPARING, TRAINING):
            return "Only a preparing or training run is resumed when its worker is lost."
        if self._last_checkpoint() is None:
            unit = "round" if objectives.is_rl(self.objective) else "epoch"
            return f"No {unit} of this run left a checkpoint yet."
        return self.gave_up_resuming()

    def gave_up_resuming(self) -> str | None:
        """Why the run is not resumed again, when its last checkpoint was resumed from MAX_RESUMES_OF_A_ROUND
        times."""
        if (point := self._last_checkpoint()) is None:
            return None
        times = sum(1 for r in self.resumes if r["after_round"] == point[0])
        return gave_up_words(point[0], unit_of(self.objective)) if times >= MAX_RESUMES_OF_A_ROUND else None

    @property
    def resuming_from(self) -> int | None:
        """While queued after a Resumed or Continued: the round the next worker goes on from."""
        return self.resume_point["round"] if self.resume_point is not None else None

    def resume_after_lost_worker(self, worker: str, actor: dict[str, str]) -> None:
        """`worker`: the lost worker in words ("The worker (gpu-7, process 4242)")."""
        if (refusal := self.resume_refusal()) is not None:
            raise IllegalTransition(refusal)
        point = self._last_checkpoint()
        assert point is not None  # resume_refusal checked there is one
        self._resumed(after_round=point[0], checkpoint_sha256=point[1], worker=worker, actor=actor)

    # --- Continue from round N: the user's command ------------------------------------------------------------
    def continue_refusal(self) -> str | None:
        """Why this run can't be continued, in words; None when it can."""
        if self.is_trial or not objectives.is_rl(self.objective):
            return "Only a full RL run can be continued from a round: Retry starts this one again."
        stopped = self.state == ADAPTER_READY and self.stop is not None and self.stop["reason"] in CONTINUABLE_STOPS
        if not stopped and self.state != CANCELLED:
            status = STATUS_NAMES[self.state]
            if self.stop is not None:
                status = f"{status}, stopped by {messages.STOP_REASONS[self.stop['reason']]}"
            return (
                "Only a run stopped by its time limit or out of memory, or a cancelled run, can be continued: this run "
                f"is {status}."
            )
        if self.retried_as is not None:
            return "This run was already retried: open its retry instead."
        if self._last_checkpoint() is None:
            return "No round of this run left a checkpoint, so it can't be continued: Retry starts it from round 1."
        return None

    @property
    def continues_from(self) -> int | None:
        """The round "Continue from round N" would go on from; None when the run can't be continued."""
        if self.continue_refusal() is not None:
            return None
        assert self.latest_round is not None  # a continuable run has a round with a checkpoint
        return int(self.latest_round["round_number"])

    def continue_from_last_round(self, settings: Any, changes: list[str], actor: dict[str, str]) -> None:
        """`settings`: the run's, with the Rounds and Time limit it goes on with (checked by the caller's parser);
        `changes`: what changed, in words ("Rounds 20 → 30")."""
        if (refusal := self.continue_refusal()) is not None:
            raise IllegalTransition(refusal)
        last = self.latest_round
        assert last is not None  # continue_refusal checked it has a checkpoint
        if settings.rounds <= last["round_number"]:
            done = last["round_number"]
            raise IllegalTransition(f"This run has done {done} rounds already: to continue it, Rounds must be more "
                                    f"than {done}.")
        self._continued(after_round=last["round_number"], checkpoint_sha256=last["checkpoint_sha256"],
                        settings=settings, changes=changes, actor=actor)
