"""The experiment pages; a live experiment's body re-asks for itself every 2 s, like a loop's."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.response import Redirect, Template

from app.evaluations.waiting import queued_work_page
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotFound
from projections import evaluations as reads


def experiment_context(read_models: Any, identity: Identity, experiment_id: UUID) -> dict[str, Any]:
    experiment = reads.experiment(read_models.tables, identity.organization_id, experiment_id)
    if experiment is None:
        raise NotFound("There is no such experiment.")
    return {"experiment": experiment, "live": experiment["live"], "section": "experiments", "identity": identity}


class ExperimentsPageController(Controller):
    path = "/experiments"
    include_in_schema = False

    @get("/", name="experiments:list", sync_to_thread=True)
    def list_experiments(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        rows = reads.experiments(read_models.tables, identity.organization_id)
        return Template("experiments/list.html",
                        context={"experiments": rows, "section": "experiments", "identity": identity})

    @get("/{experiment_id:uuid}", name="experiments:detail", sync_to_thread=True)
    def detail(self, request: Request, experiment_id: UUID, read_models: ReadModelsDep,
               identity: Identity) -> Template:
        context = experiment_context(read_models, identity, experiment_id)
        return queued_work_page(request, read_models, identity, context, "experiment", "experiments")

    @post("/{experiment_id:uuid}/stop", name="experiments:stop", sync_to_thread=True)
    def stop(self, experiment_id: UUID, verity: Verity, own_writes: OwnWritesDep, identity: Identity) -> Redirect:
        written = verity.stop_experiment(identity.organization_id, experiment_id, identity.actor)
        return redirect_once_seen(own_writes, written.position, f"/experiments/{experiment_id}")
