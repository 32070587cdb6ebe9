"""The experiments API: create one (it starts at once), read one, stop it."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller

from app.evaluations.work_routes import create_api, detail_api, stop_api
from app.experiments.pages import experiment_context
from app.shell.identity import Identity
from app.shell.ids import body_id
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.evaluations.answer_length import MAX_ANSWER_TOKENS_DEFAULT
from domain.written import Written


def create_experiment(verity: Verity, data: dict[str, Any], identity: Identity) -> Written:
    """Body: {project_id, name, source, scoring, main_metric, max_answer_tokens (the evaluations' longest answer;
    refused under evaluation_max_answer_tokens), baseline_id (reuse a completed
    baseline: it fixes the evaluation settings), reused_run (reuse its adapter: trains nothing), reward (null:
    the evaluation's main metric), rl: {start_run, rounds, prompts_per_round, answers_per_prompt,
    max_answer_tokens}, advanced: {...}}."""
    project_id = body_id(data, "project_id")
    if project_id is None:
        raise SettingsInvalid({"project_id": "project_id must be a project's ID."})
    return verity.create_experiment(
        identity.organization_id, project_id, name=str(data.get("name") or ""), actor=identity.actor,
        role=identity.role, source=data.get("source"), scoring=data.get("scoring"),
        main_metric=data.get("main_metric"), baseline_id=body_id(data, "baseline_id"),
        reward=data.get("reward"), rl=data.get("rl"), advanced=data.get("advanced"),
        reused_run=body_id(data, "reused_run"),
        max_answer_tokens=data.get("max_answer_tokens", MAX_ANSWER_TOKENS_DEFAULT),
    )


class ExperimentsApiController(Controller):
    path = "/experiments"
    tags: ClassVar[list[str]] = ["Experiments"]

    create = create_api("experiments", create_experiment)
    detail = detail_api("experiments", "experiment", experiment_context, ("experiment",))
    stop = stop_api("experiments", "experiment", Verity.stop_experiment)
