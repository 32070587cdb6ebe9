"""Manage metrics: the organization's custom metrics with their versions; register, edit (a new version), archive.

The source is checked before anything is saved: a refusal comes back on the form, in words, with status 422.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any
from uuid import UUID

from litestar import get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.metrics.source import source_from_form
from app.shell.console import Console, ConsoleController, ConsoleDep
from domain.custom_metrics import CustomMetric
from domain.errors import NotFound
from domain.written import Written

FORM = Body(media_type=RequestEncodingType.MULTI_PART)  # the source may come as a .py file
NO_METRICS = "No custom metrics yet. Upload a Python metric to use it as the reward."
EXAMPLE_SOURCE = '''def score(answer, reference):
    """1 when the answer ends with the reference, else 0."""
    return 1.0 if answer.strip().endswith(reference.strip()) else 0.0
'''


class MetricsPageController(ConsoleController):
    path = "/metrics"
    include_in_schema = False

    @get("/", name="metrics:list", sync_to_thread=True)
    def list_metrics(self, console: ConsoleDep) -> Template:
        return Template("metrics/list.html", context=_list_context(console))

    @post("/", name="metrics:register", sync_to_thread=True)
    def register(self, data: Annotated[dict[str, Any], FORM], console: ConsoleDep) -> Template | Redirect:
        name = data.get("name") if isinstance(data.get("name"), str) else ""

        def register_metric() -> Written:
            source = source_from_form(data)
            return console.verity.register_custom_metric(console.organization_id, name, source, console.actor)

        metric_path = f"/metrics/{CustomMetric.create_id(console.organization_id, name)}"
        list_again = partial(_list_again, console, name, _typed_source(data))
        return console.write_from_form(register_metric, list_again, lambda _written: metric_path)

    @get("/{metric_id:uuid}", name="metrics:detail", sync_to_thread=True)
    def detail(self, metric_id: UUID, console: ConsoleDep) -> Template:
        return Template("metrics/detail.html", context=_metric_context(console, metric_id))

    @post("/{metric_id:uuid}/versions", name="metrics:edit", sync_to_thread=True)
    def edit(self, metric_id: UUID, data: Annotated[dict[str, Any], FORM], console: ConsoleDep) -> Template | Redirect:
        def edit_metric() -> Written:
            source = source_from_form(data)
            return console.verity.edit_custom_metric(console.organization_id, metric_id, source, console.actor)

        metric_again = partial(_metric_again, console, metric_id, _typed_source(data))
        return console.write_from_form(edit_metric, metric_again, lambda _written: f"/metrics/{metric_id}")

    @post("/versions/{version_id:uuid}/archive", name="metrics:archive", sync_to_thread=True)
    def archive(self, version_id: UUID, console: ConsoleDep) -> Redirect:
        written = console.verity.archive_custom_metric_version(console.organization_id, version_id, console.actor)
        version = console.verity.get_custom_metric_version(console.organization_id, version_id)
        metric_id = CustomMetric.create_id(console.organization_id, version.name)
        return console.redirect_once_seen(written, f"/metrics/{metric_id}")


def _typed_source(form: dict[str, Any]) -> str:
    """The source as typed in the form's text box; none when it came as a file."""
    typed = form.get("source")
    return typed if isinstance(typed, str) else ""


def _list_context(
    console: Console, *, name: str = "", source: str = "", errors: Mapping[str, str] | None = None
) -> dict[str, Any]:
    org_id = console.organization_id
    versions = console.read_models.custom_metric_versions(org_id)  # type: ignore[attr-defined]
    return {
        "identity": console.identity,
        "section": "metrics",
        "metrics": console.read_models.custom_metrics(org_id),  # type: ignore[attr-defined]
        "versions_of": {
            metric_id: [v for v in versions if v.metric_id == metric_id]
            for metric_id in {v.metric_id for v in versions}
        },
        "no_metrics": NO_METRICS,
        "name": name,
        "source": source or EXAMPLE_SOURCE,
        "errors": errors or {},
    }


def _list_again(console: Console, name: str, source: str, errors: Mapping[str, str], status_code: int) -> Template:
    """Manage metrics again with the name and source as typed, and why they were not registered."""
    context = _list_context(console, name=name, source=source, errors=errors)
    return Template("metrics/list.html", context=context, status_code=status_code)


def _metric_context(
    console: Console, metric_id: UUID, *, source: str = "", errors: Mapping[str, str] | None = None
) -> dict[str, Any]:
    org_id = console.organization_id
    metric = console.read_models.custom_metric(org_id, metric_id)  # type: ignore[attr-defined]
    if metric is None:
        raise NotFound("There is no such custom metric in this organization.")
    versions = console.read_models.custom_metric_versions(org_id, metric_id)  # type: ignore[attr-defined]
    return {
        "identity": console.identity,
        "section": "metrics",
        "metric": metric,
        "versions": versions,
        "source": source or (versions[0].source if versions else ""),
        "errors": errors or {},
    }


def _metric_again(
    console: Console, metric_id: UUID, source: str, errors: Mapping[str, str], status_code: int
) -> Template:
    """The metric's page again with the source as typed, and why it was not saved as a new version."""
    context = _metric_context(console, metric_id, source=source, errors=errors)
    return Template("metrics/detail.html", context=context, status_code=status_code)
