"""The training-loops API: start a loop, read one with its rounds, stop it."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Controller, get, post

from app.loops.pages import loop_context
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.runs.settings import run_body_from_api


class LoopsApiController(Controller):
    path = "/loops"
    tags: ClassVar[list[str]] = ["Training loops"]

    @post("/", name="api:loops:create", status_code=201, sync_to_thread=True)
    def create(self, data: dict[str, Any], verity: Verity, own_writes: OwnWritesDep,
               identity: Identity) -> dict[str, Any]:
        """Body: {project_id, name, benchmark, score_column, target (percent), max_rounds, give_up_after,
        reclaim_storage, training: {...the run body's training block...}}."""
        try:
            project_id = UUID(str(data.get("project_id")))
        except ValueError:
            raise SettingsInvalid({"project_id": "project_id must be a project's ID."}) from None
        draft = run_body_from_api({"name": data.get("name") or "", "training": data.get("training") or {}})
        written = verity.create_loop(
            identity.organization_id, project_id, name=str(data.get("name") or ""),
            benchmark=str(data.get("benchmark") or "math_pairs_held_out"),
            score_column=str(data.get("score_column") or "accuracy"), target_percent=data.get("target"),  # type: ignore[arg-type]
            max_rounds=data.get("max_rounds", 8), give_up_after=data.get("give_up_after", 2),
            reclaim_storage=bool(data.get("reclaim_storage", True)), draft=draft, actor=identity.actor,
            role=identity.role, benchmark_size=data.get("benchmark_size", 64),
        )
        own_writes.see(written.position)  # the jobs take its steps, as the event log tells them
        return {"id": str(written.id), "position": written.position}

    @get("/{loop_id:uuid}", name="api:loops:detail", sync_to_thread=True)
    def detail(self, loop_id: UUID, read_models: ReadModelsDep, identity: Identity) -> dict[str, Any]:
        context = loop_context(read_models, identity, loop_id)
        return {"loop": context["loop"], "rounds": context["rounds"]}

    @post("/{loop_id:uuid}/stop", name="api:loops:stop", sync_to_thread=True)
    def stop(self, loop_id: UUID, verity: Verity, own_writes: OwnWritesDep, identity: Identity) -> dict[str, Any]:
        written = verity.stop_loop(identity.organization_id, loop_id, identity.actor)
        own_writes.see(written.position)
        return {"id": str(written.id), "position": written.position}
