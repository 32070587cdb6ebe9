"""What each event of the log asks the jobs to send; the dispatcher (jobs/dispatcher.py) reads the log in order and
hands each event here.

| event | message |
| --- | --- |
| Run.Launched (a Launch, a Retry's new run, an agent's start_training) | `launch_run` / `launch_trial` |
| Run.Resumed (the reconciler found the run's worker lost) | `launch_run` |
| Run.Continued (Continue from round N) | `launch_run` |
| Run.MergeRequested | `merge_model` |
| Evaluation.Created (New evaluation, Score against baseline) | `evaluate` |
| TrainingLoop.Created, .RoundStarted, .Benchmarking | `step_loop` |
| Experiment.Created, .Measuring, .Training, .Evaluating | `step_experiment` |
| Probe.Saved (Probe a reward) | `probe_reward` |
| Rescoring.Saved (Re-score with another reward) | `rescore_answers` |

The runs and evaluations that a loop or an experiment starts are done by its step (jobs/steps.py), so their launch
and creation send nothing alone. What is no longer to do when its event is read (a run cancelled before it was
sent, a catch-up over an old log) is not sent.

A message that can't be sent now: a launch is left to the reconciler (it sends a Queued run that never reached the
broker); a merge ends in words at once (Merge model asks again); an evaluation or a step raises NotSentNow, and the
dispatcher tries it again a moment later, sending nothing after it first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.persistence import Notification

from domain.application import Verity
from domain.errors import NotFound
from domain.experiments.commands import EXPERIMENTS
from domain.loops.commands import LOOPS
from domain.runs.merge import MERGING
from domain.runs.run import QUEUED
from jobs.merge import merge_not_sent

log = logging.getLogger(__name__)

LAUNCH, MERGE, EVALUATION, LOOP, EXPERIMENT = "launch", "merge", "evaluation", "loop", "experiment"
PROBE = "probe"
RESCORING = "rescoring"
ROUTES = {
    "Run.Launched": LAUNCH,
    "Run.Resumed": LAUNCH,
    "Run.Continued": LAUNCH,
    "Run.MergeRequested": MERGE,
    "Evaluation.Created": EVALUATION,
    "TrainingLoop.Created": LOOP,
    "TrainingLoop.RoundStarted": LOOP,
    "TrainingLoop.Benchmarking": LOOP,
    "Experiment.Created": EXPERIMENT,
    "Experiment.Measuring": EXPERIMENT,
    "Experiment.Training": EXPERIMENT,
    "Experiment.Evaluating": EXPERIMENT,
    "Probe.Saved": PROBE,
    "Rescoring.Saved": RESCORING,
}
DONE_BY_A_STEP = {LOOPS.id, EXPERIMENTS.id}  # who launched a run, or created an evaluation, that a step does
# messages a restart of the embedded default must send again
NOTHING_ELSE_RESENDS = {EVALUATION, LOOP, EXPERIMENT, PROBE, RESCORING}


class Outbox(Protocol):
    """Where the messages go (jobs/actors.py's Jobs); each answers the message it put on a queue, or None."""

    def send_launch(self, run_id: UUID) -> Any: ...

    def send_merge(self, run_id: UUID) -> Any: ...

    def send_evaluation(self, evaluation_id: UUID) -> Any: ...

    def send_loop_step(self, loop_id: UUID) -> Any: ...

    def send_experiment_step(self, experiment_id: UUID) -> Any: ...

    def send_probe(self, probe_id: UUID) -> Any: ...

    def send_rescoring(self, rescoring_id: UUID) -> Any: ...


class NotSentNow(Exception):
    """A message that must go before anything after it could not be sent; the dispatcher's pass stops there."""


def kind_of(notification: Notification) -> str | None:
    """What an event asks for, from its topic ("domain.runs.run:Run.Launched"); None for most events."""
    return ROUTES.get(notification.topic.rsplit(":", 1)[-1])


class Routes:
    def __init__(self, verity: Verity, outbox: Outbox) -> None:
        self.verity, self.outbox = verity, outbox

    def send(self, notification: Notification, kind: str) -> Any:
        """Sends the message the event asks for, if its work is still to do; answers the message, or None."""
        event: Any = self.verity.mapper.to_domain_event(notification)
        target = event.originator_id
        if kind in (LAUNCH, EVALUATION) and (event.actor or {}).get("id") in DONE_BY_A_STEP:
            return None
        if not self._still_to_do(kind, target):
            return None
        sends: dict[str, Callable[[UUID], Any]] = {
            LAUNCH: self.outbox.send_launch,
            MERGE: self.outbox.send_merge,
            EVALUATION: self.outbox.send_evaluation,
            LOOP: self.outbox.send_loop_step,
            EXPERIMENT: self.outbox.send_experiment_step,
            PROBE: lambda probe_id: self.outbox.send_probe(probe_id),  # looked up only for a probe
            RESCORING: lambda rescoring_id: self.outbox.send_rescoring(rescoring_id),
        }
        try:
            message = sends[kind](target)
        except Exception as problem:
            self._not_sent(kind, target, problem)
            return None
        log.info("sent the %s of %s (event %s)", kind, target, notification.id)
        return message

    def _still_to_do(self, kind: str, target: UUID) -> bool:
        verity = self.verity
        try:
            if kind == LAUNCH:
                return verity.get_run(None, target).state == QUEUED
            if kind == MERGE:
                merge = verity.get_run(None, target).merge
                return merge is not None and merge["state"] == MERGING
            if kind == EVALUATION:
                return verity.get_evaluation(None, target).state == QUEUED
            if kind == LOOP:
                return verity.get_loop(None, target).is_live
            if kind == PROBE:
                return verity.get_probe(None, target).state == "queued"
            if kind == RESCORING:
                return verity.get_rescoring(None, target).state == "queued"
            return verity.get_experiment(None, target).is_live
        except NotFound:
            return False

    def _not_sent(self, kind: str, target: UUID, problem: Exception) -> None:
        if kind == LAUNCH:
            log.warning("run %s could not be put on its queue now (%s); the reconciler sends it again", target,
                        problem)
        elif kind == MERGE:
            merge_not_sent(self.verity, target)  # Merge model asks again
        else:
            log.warning("the %s of %s could not be sent now (%s); trying again", kind, target, problem)
            raise NotSentNow(f"the {kind} of {target}") from problem
