"""A project's starting values for the Configure form: the Demo project's tiny model learns with its own numbers."""

from __future__ import annotations

from uuid import uuid4

import pytest

from app.runs.defaults import starting_draft
from domain.errors import SettingsInvalid
from projections.rows import ProjectRow
from projections.runner import ProjectionRunner
from verity.wiring import DEMO_RUN_DEFAULTS, SETUP, build_application, build_read_models, ensure_default_organization


def _project(run_defaults: dict) -> ProjectRow:
    return ProjectRow(uuid4(), uuid4(), "p", "some/model", None, False, "2026-01-01", run_defaults)


def test_a_project_without_its_own_numbers_starts_from_the_products_defaults() -> None:
    draft = starting_draft([_project({})]).to_api()["training"]
    assert draft["advanced"]["learning_rate"] == 5e-6 and draft["rl"]["prompts_per_round"] == 64


def test_the_demo_project_starts_its_runs_from_the_tiny_models_numbers(sqlite_settings) -> None:
    verity = build_application(sqlite_settings)
    read_models = build_read_models(sqlite_settings)
    org_id, project_id = ensure_default_organization(sqlite_settings, verity, read_models)
    position = verity.notification_log.select(start=1, limit=1000)[-1].id
    ensure_default_organization(sqlite_settings, verity, read_models)  # idempotent: nothing new recorded
    assert verity.notification_log.select(start=1, limit=1000)[-1].id == position
    ProjectionRunner(verity, read_models).run_once()

    [demo] = read_models.projects(org_id)
    assert demo.run_defaults == DEMO_RUN_DEFAULTS
    draft = starting_draft([demo]).to_api()["training"]
    assert draft["advanced"]["learning_rate"] == 0.0005 and draft["rl"]["max_answer_tokens"] == 16

    with pytest.raises(SettingsInvalid) as refused:
        verity.set_project_run_defaults(org_id, project_id, {"rl": {"rounds": 0}}, SETUP)
    assert "Rounds" in refused.value.errors["rounds"]
    assert verity.notification_log.select(start=1, limit=1000)[-1].id == position  # nothing recorded
