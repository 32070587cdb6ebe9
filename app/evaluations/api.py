"""The evaluations API: create an evaluation (or Score against baseline for a run), read one with its results."""

from __future__ import annotations

from typing import Any, ClassVar

from litestar import Controller

from app.evaluations.pages import evaluation_context
from app.evaluations.work_routes import create_api, detail_api
from app.shell.identity import Identity
from app.shell.ids import body_id
from domain.application import Verity
from domain.written import Written


def create_evaluation(verity: Verity, data: dict[str, Any], identity: Identity) -> Written:
    """Body: {project_id, name, source, scoring, main_metric, adapter_run?, max_answer_tokens?}, or
    {against_baseline_of: run id} for Score against baseline."""
    org_id = identity.organization_id
    if data.get("against_baseline_of"):
        return verity.score_against_baseline(org_id, body_id(data, "against_baseline_of", required=True),
                                             identity.actor)
    return verity.create_evaluation(
        org_id, body_id(data, "project_id", required=True), name=str(data.get("name") or ""),
        source=data.get("source"), scoring=data.get("scoring") or {},  # type: ignore[arg-type]
        main_metric=str(data.get("main_metric") or ""), actor=identity.actor,
        adapter_run=body_id(data, "adapter_run"),
        max_answer_tokens=data.get("max_answer_tokens", 64),
    )


class EvaluationsApiController(Controller):
    path = "/evaluations"
    tags: ClassVar[list[str]] = ["Evaluations"]

    create = create_api("evaluations", create_evaluation)
    detail = detail_api("evaluations", "evaluation", evaluation_context, ("evaluation", "results", "comparison"))
