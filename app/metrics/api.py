"""The custom-metrics API: register a metric (its version 1), edit it (a new version), archive a version, read.

A source that does not compile or defines no score(answer, reference) is refused with 422 and nothing is saved.
"""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import get, post

from app.metrics.schemas import CustomMetricIn, CustomMetricOut, CustomMetricSourceIn, CustomMetricVersionOut
from app.runs.schemas import CommandAnswer
from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.dependencies import ReadModelsDep
from app.shell.identity import Identity
from domain.errors import NotFound
from domain.written import Written


class CustomMetricsApiController(ConsoleController):
    path = "/custom-metrics"
    tags: ClassVar[list[str]] = ["Custom metrics"]

    @get("/", name="api:metrics:list", sync_to_thread=True)
    def list_metrics(self, read_models: ReadModelsDep, identity: Identity) -> list[CustomMetricOut]:
        org_id = identity.organization_id
        return [
            CustomMetricOut.of(row, read_models.custom_metric_versions(org_id, row.id))
            for row in read_models.custom_metrics(org_id)
        ]

    @post("/", name="api:metrics:register", status_code=201, sync_to_thread=True)
    def register(self, data: CustomMetricIn, console: ConsoleDep) -> CustomMetricVersionOut:
        """Register a metric; the answer is its version 1, whose `reward_metric` a run's reward names."""
        written = console.verity.register_custom_metric(console.organization_id, data.name, data.source, console.actor)
        return _version_after(console, written)

    @get("/{metric_id:uuid}", name="api:metrics:detail", sync_to_thread=True)
    def detail(self, metric_id: UUID, read_models: ReadModelsDep, identity: Identity) -> CustomMetricOut:
        org_id = identity.organization_id
        row = _found(read_models.custom_metric(org_id, metric_id))
        return CustomMetricOut.of(row, read_models.custom_metric_versions(org_id, metric_id))

    @post("/{metric_id:uuid}/versions", name="api:metrics:edit", status_code=201, sync_to_thread=True)
    def edit(self, metric_id: UUID, data: CustomMetricSourceIn, console: ConsoleDep) -> CustomMetricVersionOut:
        """A new version of the metric; runs saved with an older version keep theirs."""
        written = console.verity.edit_custom_metric(console.organization_id, metric_id, data.source, console.actor)
        return _version_after(console, written)


class CustomMetricVersionsApiController(ConsoleController):
    path = "/custom-metric-versions"
    tags: ClassVar[list[str]] = ["Custom metrics"]

    @get("/{version_id:uuid}", name="api:metric-versions:detail", sync_to_thread=True)
    def detail(self, version_id: UUID, read_models: ReadModelsDep, identity: Identity) -> CustomMetricVersionOut:
        return CustomMetricVersionOut.of(
            _found(read_models.custom_metric_version(identity.organization_id, version_id))
        )

    @post("/{version_id:uuid}/archive", name="api:metric-versions:archive", status_code=200, sync_to_thread=True)
    def archive(self, version_id: UUID, console: ConsoleDep) -> CustomMetricVersionOut:
        """Archive a version: refused for a new run from now on; a saved run keeps it."""
        written = console.verity.archive_custom_metric_version(console.organization_id, version_id, console.actor)
        return _version_after(console, written)


def _version_after(console: Console, written: Written) -> CustomMetricVersionOut:
    """A command's answer, once the read models show it: the version it saved and where its events stand."""
    console.own_writes.see(written.position)
    row = _found(console.read_models.custom_metric_version(console.organization_id, written.id))  # type: ignore[attr-defined]
    return CustomMetricVersionOut.of(row, CommandAnswer(id=written.id, position=written.position))


def _found(row: Any) -> Any:
    if row is None:
        raise NotFound("There is no such custom metric or version in this organization.")
    return row
