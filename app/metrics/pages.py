"""Manage metrics: the organization's custom metrics with their versions; register, edit (a new version), archive.

The source is checked before anything is saved: a refusal comes back on the form, in words, with status 422.
"""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.metrics.source import source_from_form
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.roles import CHANGE
from domain.application import Verity
from domain.custom_metrics import CustomMetric
from domain.errors import NotFound, SettingsInvalid
from projections.store import ReadModels

FORM = Body(media_type=RequestEncodingType.MULTI_PART)  # the source may come as a .py file
NO_METRICS = "No custom metrics yet. Upload a Python metric to use it as the reward."
EXAMPLE_SOURCE = '''def score(answer, reference):
    """1 when the answer ends with the reference, else 0."""
    return 1.0 if answer.strip().endswith(reference.strip()) else 0.0
'''


class MetricsPageController(Controller):
    path = "/metrics"
    include_in_schema = False

    @get("/", name="metrics:list", sync_to_thread=True)
    def list_metrics(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return Template("metrics/list.html", context=_list_context(read_models, identity))

    @post("/", name="metrics:register", sync_to_thread=True)
    def register(
        self,
        data: Annotated[dict[str, Any], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template | Redirect:
        name = data.get("name") if isinstance(data.get("name"), str) else ""
        if (refused_role := identity.refusal(CHANGE)) is not None:  # the form again, as typed, with why not
            typed = data.get("source") if isinstance(data.get("source"), str) else ""
            context = _list_context(read_models, identity, name=name, source=typed, errors={"": refused_role})
            return Template("metrics/list.html", context=context, status_code=403)
        try:
            source = source_from_form(data)
            written = verity.register_custom_metric(identity.organization_id, name, source, identity.actor)
        except SettingsInvalid as refused:
            typed = data.get("source") if isinstance(data.get("source"), str) else ""
            context = _list_context(read_models, identity, name=name, source=typed, errors=refused.errors)
            return Template("metrics/list.html", context=context, status_code=422)
        own_writes.see(written.position)
        metric_id = CustomMetric.create_id(identity.organization_id, name)
        return Redirect(path=f"/metrics/{metric_id}", status_code=303)

    @get("/{metric_id:uuid}", name="metrics:detail", sync_to_thread=True)
    def detail(self, metric_id: UUID, read_models: ReadModelsDep, identity: Identity) -> Template:
        return Template("metrics/detail.html", context=_metric_context(read_models, identity, metric_id))

    @post("/{metric_id:uuid}/versions", name="metrics:edit", sync_to_thread=True)
    def edit(
        self,
        metric_id: UUID,
        data: Annotated[dict[str, Any], FORM],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> Template | Redirect:
        if (refused_role := identity.refusal(CHANGE)) is not None:
            typed = data.get("source") if isinstance(data.get("source"), str) else ""
            context = _metric_context(read_models, identity, metric_id, source=typed, errors={"": refused_role})
            return Template("metrics/detail.html", context=context, status_code=403)
        try:
            source = source_from_form(data)
            written = verity.edit_custom_metric(identity.organization_id, metric_id, source, identity.actor)
        except SettingsInvalid as refused:
            typed = data.get("source") if isinstance(data.get("source"), str) else ""
            context = _metric_context(read_models, identity, metric_id, source=typed, errors=refused.errors)
            return Template("metrics/detail.html", context=context, status_code=422)
        return redirect_once_seen(own_writes, written.position, f"/metrics/{metric_id}")

    @post("/versions/{version_id:uuid}/archive", name="metrics:archive", sync_to_thread=True)
    def archive(
        self,
        version_id: UUID,
        verity: Verity,
        own_writes: OwnWritesDep,
        identity: Identity,
    ) -> Redirect:
        written = verity.archive_custom_metric_version(identity.organization_id, version_id, identity.actor)
        own_writes.see(written.position)
        version = verity.get_custom_metric_version(identity.organization_id, version_id)
        metric_id = CustomMetric.create_id(identity.organization_id, version.name)
        return Redirect(path=f"/metrics/{metric_id}", status_code=303)


def _list_context(
    read_models: ReadModels,
    identity: Identity,
    *,
    name: str = "",
    source: str = "",
    errors: dict[str, str] | None = None,
) -> dict[str, Any]:
    org_id = identity.organization_id
    versions = read_models.custom_metric_versions(org_id)  # type: ignore[attr-defined]
    return {
        "identity": identity,
        "section": "metrics",
        "metrics": read_models.custom_metrics(org_id),  # type: ignore[attr-defined]
        "versions_of": {
            metric_id: [v for v in versions if v.metric_id == metric_id]
            for metric_id in {v.metric_id for v in versions}
        },
        "no_metrics": NO_METRICS,
        "name": name,
        "source": source or EXAMPLE_SOURCE,
        "errors": errors or {},
    }


def _metric_context(
    read_models: ReadModels,
    identity: Identity,
    metric_id: UUID,
    *,
    source: str = "",
    errors: dict[str, str] | None = None,
) -> dict[str, Any]:
    org_id = identity.organization_id
    metric = read_models.custom_metric(org_id, metric_id)  # type: ignore[attr-defined]
    if metric is None:
        raise NotFound("There is no such custom metric in this organization.")
    versions = read_models.custom_metric_versions(org_id, metric_id)  # type: ignore[attr-defined]
    return {
        "identity": identity,
        "section": "metrics",
        "metric": metric,
        "versions": versions,
        "source": source or (versions[0].source if versions else ""),
        "errors": errors or {},
    }
