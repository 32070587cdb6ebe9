"""Evaluations: the list, an evaluation's page (score, breakdown, per-example results; Score against baseline side by
side) and the API under /api/evaluations."""

from app.evaluations.api import EvaluationsApiController
from app.evaluations.forms import NewEvaluationPageController
from app.evaluations.pages import EvaluationsPageController

API_CONTROLLERS = [EvaluationsApiController]
PAGE_CONTROLLERS = [NewEvaluationPageController, EvaluationsPageController]
