"""The re-scoring pages under Tune (linked from the reward probes' list): the list, Re-score with another reward
(the form, prefilled from ?run= or ?probe=), a re-scoring's page (whose body re-asks for itself every 2 s while it
scores) and its moved answers, read from its answers file in storage when the page opens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any
from uuid import UUID

from litestar import get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.auth.guard import READ_ONLY
from app.evaluations.forms import scoring_fields
from app.evaluations.work_routes import WorkPagesController, detail_page, list_page
from app.probes.pages import reward_choices, reward_of_form
from app.probes.reads import AnswersUnreadable
from app.rescorings.reads import rescoring_context, shown, stored_answers
from app.shell.dependencies import OwnWritesDep, ReadModelsDep, StorageDep
from app.shell.identity import Identity
from domain.access.roles import LAUNCH
from domain.application import Verity
from domain.errors import DomainError, NotFound, SettingsInvalid
from domain.rescorings.commands import FINISHED_RUN
from projections import probes as probe_reads
from projections import rescorings as reads

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
DEFAULTS = {"name": "", "source": "", "metric": "qa:exact_match"}


def source_choices(read_models: Any, org_id: UUID) -> list[tuple[str, str]]:
    """What may be re-scored: the organization's finished RL runs that trained a round, and its scored probes."""
    choices = [
        (f"run:{run.id}", f"Run {run.name or str(run.id)[:8]} · {run.rounds_done} rounds · {run.reward_label}")
        for run in read_models.runs(org_id)
        if run.objective == "rl" and run.state in FINISHED_RUN and run.rounds_done >= 1
    ]
    choices += [
        (f"probe:{probe['id']}", f"Probe {probe['name']} · {probe['reward_label']}")
        for probe in probe_reads.probes(read_models.tables, org_id) if probe["state"] == "scored"
    ]
    return choices


def _source_of_form(value: str) -> dict[str, str] | None:
    kind, _, source_id = value.partition(":")
    return {"kind": kind, "id": source_id} if kind in ("run", "probe") and source_id else None


def _page(read_models: Any, identity: Identity, values: Mapping[str, str], errors: Mapping[str, str],
          status_code: int = 200) -> Template:
    errors = {f"reward_{key.removeprefix('reward.')}" if key.startswith("reward.") else key: message
              for key, message in errors.items()}
    context = {
        "section": "probes", "identity": identity, "values": values, "errors": errors,
        "sources": source_choices(read_models, identity.organization_id),
        "metrics": reward_choices(read_models, identity.organization_id),
        "scoring_fields": scoring_fields(values, errors),
    }
    return Template("rescorings/new.html", context=context, status_code=status_code)


class RescoringsPageController(WorkPagesController):
    path = "/rescorings"

    list_rescorings = list_page("rescorings", reads.rescorings)
    detail = detail_page("rescorings", "rescoring", rescoring_context)

    @get("/new", name="rescorings:new", sync_to_thread=True)
    def form(self, read_models: ReadModelsDep, identity: Identity, run: str | None = None,
             probe: str | None = None) -> Template:
        """Prefilled from a finished run's page (?run=) or a scored probe's (?probe=)."""
        source = f"run:{run}" if run else f"probe:{probe}" if probe else ""
        return _page(read_models, identity, {**DEFAULTS, "source": source}, {})

    @post("/settings", name="rescorings:settings", sync_to_thread=True, opt={READ_ONLY: True})
    def settings(self, data: Annotated[dict[str, str], FORM]) -> Template:
        """The chosen reward's settings, redrawn by htmx when Reward metric changes."""
        return Template("evaluations/scoring_settings.html", context={"scoring_fields": scoring_fields(data, {})})

    @post("/new", name="rescorings:create", sync_to_thread=True)
    def create(self, data: Annotated[dict[str, str], FORM], verity: Verity, read_models: ReadModelsDep,
               own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        if (refused := identity.refusal(LAUNCH)) is not None:  # the form again, as typed, with why not
            return _page(read_models, identity, data, {"": refused}, 403)
        try:
            written = verity.create_rescoring(
                identity.organization_id, source=_source_of_form(data.get("source", "")),
                reward=reward_of_form(data), actor=identity.actor, role=identity.role, name=data.get("name", ""),
            )
        except SettingsInvalid as problem:
            return _page(read_models, identity, data, problem.errors, 400)
        except DomainError as refused:  # the plan, in the domain's words
            return _page(read_models, identity, data, {"": refused.message}, 403)
        own_writes.see(written.position)  # the jobs score it, as the event log tells them
        return Redirect(path=f"/rescorings/{written.id}", status_code=303)

    @get("/{rescoring_id:uuid}/moved", name="rescorings:moved", sync_to_thread=True)
    def moved(self, rescoring_id: UUID, read_models: ReadModelsDep, identity: Identity,
              storage: StorageDep) -> Template:
        """The answers whose score moved, old and new, read from the answers file in storage."""
        rescoring = reads.rescoring(read_models.tables, identity.organization_id, rescoring_id)
        if rescoring is None or rescoring["summary"] is None:
            raise NotFound("There is no such re-scoring, or it has no answers yet.")
        try:
            answers = [shown(a) for a in stored_answers(storage, rescoring["summary"], moved_only=True)]
            context: dict[str, Any] = {"answers": answers, "problem": None}
        except AnswersUnreadable as problem:
            context = {"answers": [], "problem": str(problem)}
        return Template("rescorings/moved.html", context={**context, "rescoring": rescoring})
