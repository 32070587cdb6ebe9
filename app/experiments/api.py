"""The experiments API: create one (it starts at once), read one, stop it."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Controller, get, post

from app.experiments.pages import experiment_context
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from app.shell.ids import body_id
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.evaluations.answer_length import MAX_ANSWER_TOKENS_DEFAULT


class ExperimentsApiController(Controller):
    path = "/experiments"
    tags: ClassVar[list[str]] = ["Experiments"]

    @post("/", name="api:experiments:create", status_code=201, sync_to_thread=True)
    def create(self, data: dict[str, Any], verity: Verity, own_writes: OwnWritesDep,
               identity: Identity) -> dict[str, Any]:
        """Body: {project_id, name, source, scoring, main_metric, max_answer_tokens (the evaluations' longest answer;
        refused under evaluation_max_answer_tokens), baseline_id (reuse a completed
        baseline: it fixes the evaluation settings), reused_run (reuse its adapter: trains nothing), reward (null:
        the evaluation's main metric), rl: {start_run, rounds, prompts_per_round, answers_per_prompt,
        max_answer_tokens}, advanced: {...}}."""
        project_id = body_id(data, "project_id")
        if project_id is None:
            raise SettingsInvalid({"project_id": "project_id must be a project's ID."})
        written = verity.create_experiment(
            identity.organization_id, project_id, name=str(data.get("name") or ""), actor=identity.actor,
            role=identity.role, source=data.get("source"), scoring=data.get("scoring"),
            main_metric=data.get("main_metric"), baseline_id=body_id(data, "baseline_id"),
            reward=data.get("reward"), rl=data.get("rl"), advanced=data.get("advanced"),
            reused_run=body_id(data, "reused_run"),
            max_answer_tokens=data.get("max_answer_tokens", MAX_ANSWER_TOKENS_DEFAULT),
        )
        own_writes.see(written.position)  # the jobs take its steps, as the event log tells them
        return {"id": str(written.id), "position": written.position}

    @get("/{experiment_id:uuid}", name="api:experiments:detail", sync_to_thread=True)
    def detail(self, experiment_id: UUID, read_models: ReadModelsDep, identity: Identity) -> dict[str, Any]:
        return {"experiment": experiment_context(read_models, identity, experiment_id)["experiment"]}

    @post("/{experiment_id:uuid}/stop", name="api:experiments:stop", sync_to_thread=True)
    def stop(self, experiment_id: UUID, verity: Verity, own_writes: OwnWritesDep,
             identity: Identity) -> dict[str, Any]:
        written = verity.stop_experiment(identity.organization_id, experiment_id, identity.actor)
        own_writes.see(written.position)
        return {"id": str(written.id), "position": written.position}
