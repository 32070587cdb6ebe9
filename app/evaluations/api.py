"""The evaluations API: create an evaluation (or Score against baseline for a run), read one with its results."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Controller, get, post

from app.evaluations.pages import evaluation_context
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from app.shell.ids import body_id
from domain.application import Verity


class EvaluationsApiController(Controller):
    path = "/evaluations"
    tags: ClassVar[list[str]] = ["Evaluations"]

    @post("/", name="api:evaluations:create", status_code=201, sync_to_thread=True)
    def create(self, data: dict[str, Any], verity: Verity, own_writes: OwnWritesDep,
               identity: Identity) -> dict[str, Any]:
        """Body: {project_id, name, source, scoring, main_metric, adapter_run?, max_answer_tokens?}, or
        {against_baseline_of: run id} for Score against baseline."""
        org_id = identity.organization_id
        if data.get("against_baseline_of"):
            written = verity.score_against_baseline(org_id, body_id(data, "against_baseline_of", required=True),
                                                    identity.actor)
        else:
            written = verity.create_evaluation(
                org_id, body_id(data, "project_id", required=True), name=str(data.get("name") or ""),
                source=data.get("source"), scoring=data.get("scoring") or {},  # type: ignore[arg-type]
                main_metric=str(data.get("main_metric") or ""), actor=identity.actor,
                adapter_run=body_id(data, "adapter_run"),
                max_answer_tokens=data.get("max_answer_tokens", 64),
            )
        own_writes.see(written.position)  # the jobs evaluate it, as the event log tells them
        return {"id": str(written.id), "position": written.position}

    @get("/{evaluation_id:uuid}", name="api:evaluations:detail", sync_to_thread=True)
    def detail(self, evaluation_id: UUID, read_models: ReadModelsDep, identity: Identity) -> dict[str, Any]:
        context = evaluation_context(read_models, identity, evaluation_id)
        return {"evaluation": context["evaluation"], "results": context["results"],
                "comparison": context["comparison"]}
