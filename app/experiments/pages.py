"""The experiment pages; a live experiment's body re-asks for itself every 2 s, like a loop's."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.evaluations.work_routes import WorkPagesController, detail_page, list_page, stop_page
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotFound
from projections import evaluations as reads


def experiment_context(read_models: Any, identity: Identity, experiment_id: UUID) -> dict[str, Any]:
    experiment = reads.experiment(read_models.tables, identity.organization_id, experiment_id)
    if experiment is None:
        raise NotFound("There is no such experiment.")
    return {"experiment": experiment, "live": experiment["live"], "section": "experiments", "identity": identity}


class ExperimentsPageController(WorkPagesController):
    path = "/experiments"

    list_experiments = list_page("experiments", reads.experiments)
    detail = detail_page("experiments", "experiment", experiment_context)
    stop = stop_page("experiments", "experiment", Verity.stop_experiment)
