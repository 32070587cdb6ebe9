"""The Configure form's starting values: the product's defaults, with the project's own where it set them, and
what Start another run from this adapter starts from."""

from __future__ import annotations

from collections.abc import Sequence

from domain.runs import objectives
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api
from projections.rows import ProjectRow, RunDetail


def starting_draft(projects: Sequence[ProjectRow]) -> RunSettings:
    """A full run of the form's first project, e.g. the Demo project's numbers for the tiny model."""
    if not projects or not projects[0].run_defaults:
        return RunSettings(kind="full")
    return run_body_from_api({"kind": "full", "training": projects[0].run_defaults})


def continuing_draft(defaults: RunSettings, source: RunDetail) -> RunSettings:
    """Start another run from this adapter: a full run that Starts from `source`. 000's recipe is SFT first, then
    RL from that adapter, so an SFT, DPO or Head run's adapter opens the form on RL (the project's RL numbers, on
    the source's Dataset version); an RL run's opens on its own settings."""
    name = f"{source.name or 'run'} · continued"
    if objectives.is_rl(source.run_settings.objective):
        return source.run_settings.with_values(kind="full", name=name, start_run=str(source.id))
    return defaults.with_values(
        kind="full",
        name=name,
        start_run=str(source.id),
        dataset_version=source.run_settings.dataset_version or defaults.dataset_version,
    )
