"""Where the app hands new evaluations and loop steps to the jobs: an object on the app's state (the server or a
test puts jobs/'s EvaluationJobs there as "evaluation_jobs"); without one, they wait, Queued."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from litestar import Request


def send_evaluation(request: Request[Any, Any, Any], evaluation_id: UUID) -> None:
    jobs = request.app.state.get("evaluation_jobs")
    if jobs is not None:
        jobs.send_evaluation(evaluation_id)


def send_loop_step(request: Request[Any, Any, Any], loop_id: UUID) -> None:
    jobs = request.app.state.get("evaluation_jobs")
    if jobs is not None:
        jobs.send_loop_step(loop_id)


def send_experiment_step(request: Request[Any, Any, Any], experiment_id: UUID) -> None:
    jobs = request.app.state.get("evaluation_jobs")
    if jobs is not None:
        jobs.send_experiment_step(experiment_id)
