"""A training loop's or an experiment's step as a job. The domain says what comes next (`advance_loop`,
`advance_experiment`) and records it; the job it starts (a round's run, a benchmark, the base model's measure, the
adapter's evaluation) is done by the step that follows.

Each step the domain records is an event that the dispatcher (jobs/dispatcher.py) turns into the next step's
message, so a step never sends the next one itself, and one lost with a worker is sent again from the log. A step:

1. asks the domain where the loop stands: a new step is recorded when the job it waited on has ended (its own
   message does that job), or the loop waits on a job;
2. a job it waits on is done here if it is still to do: a Queued run is trained (a run whose worker died is ended:
   jobs/launching.py), a Queued evaluation scored, both in this worker, then the domain records the next step;
3. a job another worker holds is left to it, and the step looks again a little later.

The runs and evaluations a loop or an experiment starts are trained and scored here, never sent alone: the
dispatcher leaves their launch and creation to the step.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from uuid import UUID

from domain.errors import NotFound
from domain.loops.steps import LoopStep
from domain.runs.run import QUEUED
from jobs import retrying
from jobs.context import JobContext
from jobs.evaluations import run_evaluation
from jobs.launching import launch
from jobs.recording import with_fresh_run

log = logging.getLogger(__name__)

CheckBack = Callable[[UUID], None]  # sends the same step again a little later


def step_loop(ctx: JobContext, loop_id: UUID, check_back: CheckBack) -> None:
    _step(ctx, lambda: ctx.verity.advance_loop(loop_id), lambda: check_back(loop_id), f"loop {loop_id}")


def step_experiment(ctx: JobContext, experiment_id: UUID, check_back: CheckBack) -> None:
    _step(
        ctx, lambda: ctx.verity.advance_experiment(experiment_id), lambda: check_back(experiment_id),
        f"experiment {experiment_id}",
    )


def _step(ctx: JobContext, advance: Callable[[], LoopStep], check_back: Callable[[], None], what: str) -> None:
    step = _advanced(advance, what)
    if step.action != "wait" or step.target_id is None:
        return  # done, or a new step recorded: the message the dispatcher sends for it does its job
    _do_waited_job(ctx, step.target_id)
    step = _advanced(advance, what)
    if step.action == "wait":
        log.info("%s waits on %s, which another worker holds; looking again later", what, step.target_id)
        check_back()


def _advanced(advance: Callable[[], LoopStep], what: str) -> LoopStep:
    """The domain's answer, by the jobs' one rule for retrying; "done" once there is nothing left to do."""
    answers: list[LoopStep] = []
    try:
        retrying.record(lambda: answers.append(advance()), what)
    except NotFound:
        return LoopStep("done")
    step = answers[-1] if answers else LoopStep("done")
    log.info("%s: %s %s", what, step.action, step.target_id or "")
    return step


def _do_waited_job(ctx: JobContext, target_id: UUID) -> None:
    try:
        run = ctx.verity.get_run(None, target_id)
    except NotFound:  # not a run: the evaluation the step waits on
        run_evaluation(ctx, target_id)
        return
    if run.state == QUEUED:
        with_fresh_run(ctx.verity, target_id, lambda fresh: _record_queued(ctx, fresh))
    launch(ctx, target_id)


def _record_queued(ctx: JobContext, run) -> None:
    if run.state == QUEUED:
        ctx.verity.record_queued(run.id)
