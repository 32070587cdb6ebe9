"""The evaluation pages: the list and one evaluation, whose body re-asks for itself every 2 s while it runs."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from litestar import Controller, Request, get
from litestar.response import Template

from app.evaluations.waiting import queued_work_page
from app.shell.dependencies import ReadModelsDep
from app.shell.identity import Identity
from domain.errors import NotFound
from projections import evaluations as reads

BREAKDOWN_NAMES = {"accuracy": "accuracy", "accuracy_strict": "accuracy strict", "format": "format",
                   "answered": "answered"}


def answered_words(share: float | None, answers: int) -> str:
    """001's answered tile: the share of answers the model completed, and how many of how many.

    >>> answered_words(0.9375, 32)
    '94% · 30 of 32'
    """
    if share is None:
        return ""
    if not answers:
        return f"{share * 100:.0f}%"
    return f"{share * 100:.0f}% · {round(share * answers)} of {answers}"


def evaluation_context(read_models: Any, identity: Identity, evaluation_id: UUID) -> dict[str, Any]:
    tables = read_models.tables
    evaluation = reads.evaluation(tables, identity.organization_id, evaluation_id)
    if evaluation is None:
        raise NotFound("There is no such evaluation.")
    results = reads.evaluation_results(tables, evaluation_id)
    return {
        "evaluation": evaluation,
        "answered": answered_words(evaluation["breakdown"].get("answered"), len(results)),
        "results": results,
        "comparison": reads.comparison(tables, identity.organization_id, evaluation_id),
        "breakdown_names": BREAKDOWN_NAMES,
        "live": evaluation["live"],
        "section": "evaluations",
        "identity": identity,
    }


class EvaluationsPageController(Controller):
    path = "/evaluations"
    include_in_schema = False

    @get("/", name="evaluations:list", sync_to_thread=True)
    def list_evaluations(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        rows = reads.evaluations(read_models.tables, identity.organization_id)
        context = {"evaluations": rows, "section": "evaluations", "identity": identity}
        return Template("evaluations/list.html", context=context)

    @get("/{evaluation_id:uuid}", name="evaluations:detail", sync_to_thread=True)
    def detail(self, request: Request, evaluation_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        context = evaluation_context(read_models, identity, evaluation_id)
        return queued_work_page(request, read_models, identity, context, "evaluation", "evaluations")
