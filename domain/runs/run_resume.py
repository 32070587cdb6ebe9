"""Resuming a run whose worker was lost: the run goes back on its queue and the next worker continues it from the
checkpoint of its last finished round (trainer/checkpoint.py), redoing the round that was in progress.

A mixin of the Run aggregate (domain/runs/run.py), like RunProgress: the check is here, the `Resumed` event stays
declared on the Run. Only a full RL run whose last recorded round left a checkpoint resumes; a trial (one round),
an SFT or DPO run, or a run lost before its first round ended fails as before, and Retry starts it again. The same
round is resumed at most MAX_RESUMES_OF_A_ROUND times: a worker lost again and again at one round is a cause to
look at, not to repeat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from domain.errors import IllegalTransition
from domain.runs import objectives
from domain.runs.states import PREPARING, TRAINING

MAX_RESUMES_OF_A_ROUND = 3


def resumed_sentence(worker: str, after_round: int) -> str:
    """The timeline's words for a Run.Resumed event.

    >>> resumed_sentence("The worker (gpu-7, process 4242)", 12)
    'The worker (gpu-7, process 4242) stopped after round 12; the run went back on its queue to resume from round \
12.'
    """
    return (
        f"{worker} stopped after round {after_round}; the run went back on its queue to resume from round "
        f"{after_round}."
    )


def gave_up_words(after_round: int) -> str:
    return (
        f"It was resumed from round {after_round} {MAX_RESUMES_OF_A_ROUND} times and its worker was lost each time, "
        "so it was not resumed again."
    )


class RunResumes:
    # provided by Run
    state: str
    rounds: list[dict[str, Any]]
    resumes: list[dict[str, Any]]
    _resumed: Callable[..., None]

    if TYPE_CHECKING:

        @property
        def is_trial(self) -> bool: ...
        @property
        def objective(self) -> str: ...

    @property
    def resume_from(self) -> dict[str, Any] | None:
        """What the next launch continues from, {"round", "sha256"}: the last Resumed event's checkpoint."""
        if not self.resumes:
            return None
        last = self.resumes[-1]
        return {"round": last["after_round"], "sha256": last["checkpoint_sha256"]}

    def resume_refusal(self) -> str | None:
        """Why this run can't resume now, in words; None when it can."""
        if self.is_trial or not objectives.is_rl(self.objective):
            return "Only a full RL run resumes from a checkpoint."
        if self.state not in (PREPARING, TRAINING):
            return "Only a preparing or training run is resumed when its worker is lost."
        last = self.rounds[-1] if self.rounds else None
        if last is None or last["round_number"] < 1 or not last.get("checkpoint_sha256"):
            return "No round of this run left a checkpoint yet."
        return self.gave_up_resuming()

    def gave_up_resuming(self) -> str | None:
        """Why the run is not resumed again, when its last round was resumed MAX_RESUMES_OF_A_ROUND times."""
        if not self.rounds:
            return None
        last = self.rounds[-1]["round_number"]
        times = sum(1 for r in self.resumes if r["after_round"] == last)
        return gave_up_words(last) if times >= MAX_RESUMES_OF_A_ROUND else None

    def resume_after_lost_worker(self, worker: str, actor: dict[str, str]) -> None:
        """`worker`: the lost worker in words ("The worker (gpu-7, process 4242)")."""
        if (refusal := self.resume_refusal()) is not None:
            raise IllegalTransition(refusal)
        last = self.rounds[-1]
        self._resumed(after_round=last["round_number"], checkpoint_sha256=last["checkpoint_sha256"], worker=worker,
                      actor=actor)
