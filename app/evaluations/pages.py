"""The evaluation pages: the list and one evaluation, whose body re-asks for itself every 2 s while it runs."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.evaluations.work_routes import WorkPagesController, detail_page, list_page
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


class EvaluationsPageController(WorkPagesController):
    path = "/evaluations"

    list_evaluations = list_page("evaluations", reads.evaluations)
    detail = detail_page("evaluations", "evaluation", evaluation_context)
