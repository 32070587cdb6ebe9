"""The Configure form's starting values: the product's defaults, with the project's own where it set them."""

from __future__ import annotations

from collections.abc import Sequence

from domain.runs.settings import RunDraft, run_body_from_api
from projections.rows import ProjectRow


def starting_draft(projects: Sequence[ProjectRow]) -> RunDraft:
    """A full run of the form's first project, e.g. the Demo project's numbers for the tiny model."""
    if not projects or not projects[0].run_defaults:
        return RunDraft(kind="full")
    return run_body_from_api({"kind": "full", "training": projects[0].run_defaults})
