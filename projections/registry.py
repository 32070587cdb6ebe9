"""Every projection, in the order each page of events applies them.

The directory comes first, so the others may read it (it tells which organization a run belongs to); the catalog
comes before the runs, which word a custom reward by its metric's name and version; the feed comes last.
"""

from __future__ import annotations

from projections.access import Access
from projections.base import Projection
from projections.catalog import catalog_projections
from projections.directory import Directory
from projections.evaluations import evaluation_projections
from projections.feed import Feed
from projections.organizations import OrganizationsAndProjects
from projections.probes import Probes
from projections.prompts import PromptHistories
from projections.rescorings import Rescorings
from projections.rounds import Rounds
from projections.run_details import RunDetails
from projections.runs import Runs
from projections.steps import Steps
from projections.timeline import Timeline


def all_projections() -> list[Projection]:
    """In the order they apply each page: the directory first."""
    return [
        Directory(),
        OrganizationsAndProjects(),
        # datasets and custom metrics (projections/catalog.py): before the runs, which word a custom reward by
        # its metric's name and version, and before the feed
        *catalog_projections(),
        Runs(),
        RunDetails(),
        Rounds(),
        PromptHistories(),  # the run page's Prompts tab (projections/prompts.py)
        Timeline(),
        Access(),  # members and API tokens (projections/access.py)
        Steps(),  # SFT and DPO steps (projections/steps.py)
        *evaluation_projections(),  # evaluations and training loops (projections/evaluations.py)
        Probes(),  # reward probes (projections/probes.py)
        Rescorings(),  # re-scorings of stored answers (projections/rescorings.py)
        Feed(),
    ]
