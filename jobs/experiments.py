"""An experiment's step as a job: the domain says what comes next (`advance_experiment`: measure the base model,
train the RL run, evaluate the adapter), the step does it here and sends the experiment's next step once that job
has ended."""

from __future__ import annotations

import logging
from collections.abc import Callable
from uuid import UUID

from domain.errors import NotFound
from jobs.context import JobContext
from jobs.evaluations import run_evaluation
from jobs.launching import launch

log = logging.getLogger(__name__)


def step_experiment(ctx: JobContext, experiment_id: UUID, send_next: Callable[[UUID], None]) -> None:
    """One step of the experiment; the run or evaluation it starts is done in this worker, then it goes on."""
    try:
        step = ctx.verity.advance_experiment(experiment_id)
    except NotFound:
        return
    log.info("experiment %s: %s %s", experiment_id, step.action, step.target_id)
    if step.action == "train" and step.target_id is not None:
        ctx.verity.record_queued(step.target_id)
        launch(ctx, step.target_id)
    elif step.action == "evaluate" and step.target_id is not None:
        run_evaluation(ctx, step.target_id)
    else:
        return  # done, or waiting on a job another worker holds
    send_next(experiment_id)
