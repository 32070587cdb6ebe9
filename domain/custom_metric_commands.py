"""The Verity application's custom-metric commands, and the check of a draft whose reward is `custom.<id>`.

A mixin of `domain.application.Verity` (it uses the application's `_get` and `_save`). Registering checks the
source before anything is saved (it must compile and define score(answer, reference)); editing makes a new
version and leaves the old one, and every run saved with it, alone; an archived version is refused for a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from domain.actors import Actor
from domain.custom_metrics import CustomMetric, CustomMetricVersion
from domain.errors import NotFound, SettingsInvalid
from domain.rewards.custom import MetricSourceInvalid, check_metric_source
from domain.verity_parts import VerityParts
from domain.written import Written

MAX_NAME = 100
MAX_SOURCE_CHARACTERS = 200_000


class CustomMetricCommands(VerityParts):
    def get_custom_metric(self, org_id: UUID, metric_id: UUID) -> CustomMetric:
        return self._get(CustomMetric, metric_id, org_id, "custom metric")

    def get_custom_metric_version(self, org_id: UUID | None, version_id: UUID) -> CustomMetricVersion:
        """`org_id` None is for the jobs, which act for whichever organization owns the run."""
        return self._get(CustomMetricVersion, version_id, org_id, "custom metric version")

    def register_custom_metric(self, org_id: UUID, name: str, source: str, actor: Actor) -> Written:
        """A new metric and its version 1; the Written id is the version's (what a reward names)."""
        self.get_organization(org_id)
        name = name.strip()
        errors = _name_problems(name) | _source_problems(source)
        if not errors.get("name") and CustomMetric.create_id(org_id, name) in self.repository:
            errors["name"] = f"A custom metric named {name} already exists: edit it to make a new version."
        if errors:
            raise SettingsInvalid(errors)
        metric = CustomMetric(org_id=org_id, name=name, actor=actor.to_dict())
        return self._new_version(metric, source, actor)

    def edit_custom_metric(self, org_id: UUID, metric_id: UUID, source: str, actor: Actor) -> Written:
        """A new version of the metric; the Written id is the new version's."""
        metric = self.get_custom_metric(org_id, metric_id)
        errors = _source_problems(source)
        if errors:
            raise SettingsInvalid(errors)
        return self._new_version(metric, source, actor)

    def archive_custom_metric_version(self, org_id: UUID, version_id: UUID, actor: Actor) -> Written:
        version = self.get_custom_metric_version(org_id, version_id)
        version.archive(actor.to_dict())
        return Written(version.id, self._save(version))

    def _new_version(self, metric: CustomMetric, source: str, actor: Actor) -> Written:
        version = CustomMetricVersion.register(metric.org_id, metric.name, metric.next_number, source, actor.to_dict())
        metric.add_version(version.id, actor.to_dict())
        return Written(version.id, self._save(metric, version))

    # --- the check of a run draft --------------------------------------------------------------------------
    def custom_reward_problems(self, org_id: UUID, reward: Any) -> dict[str, str]:
        """A reward `custom.<version id>` must name an active version of the organization (under "reward")."""
        version_id = reward.get("custom_metric") if isinstance(reward, Mapping) else None
        if not version_id:
            return {}
        try:
            version = self.get_custom_metric_version(org_id, UUID(str(version_id)))
        except (ValueError, NotFound):
            return {"reward": f"There is no custom metric version {version_id} in this organization."}
        if version.archived:
            return {
                "reward": f"{version.label} is archived. Choose an active version: an archived one is refused "
                "for a new run."
            }
        return {}


def _name_problems(name: str) -> dict[str, str]:
    if not name:
        return {"name": "Name the metric."}
    if len(name) > MAX_NAME:
        return {"name": f"A metric's name can have at most {MAX_NAME} characters."}
    return {}


def _source_problems(source: str) -> dict[str, str]:
    if not source.strip():
        return {"source": "Paste or upload the metric's Python code: it defines score(answer, reference)."}
    if len(source) > MAX_SOURCE_CHARACTERS:
        return {"source": f"A metric can have at most {MAX_SOURCE_CHARACTERS:,} characters of code."}
    try:
        check_metric_source(source)
    except MetricSourceInvalid as problem:
        return {"source": problem.reason}
    return {}
