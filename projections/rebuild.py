"""`verity projections rebuild`: empty every read model and apply the whole event log again."""

from __future__ import annotations

from migrations import apply_to
from projections.runner import ProjectionRunner
from projections.sql_tables import PostgresTables, open_tables
from projections.store import TableReadModels
from verity.config import Settings


def rebuild_all(settings: Settings) -> int:
    """Returns how many events the read models were rebuilt from."""
    from verity.wiring import build_application  # wiring imports projections: import it when called

    verity = build_application(settings)
    tables = open_tables(settings)
    try:
        apply_to(tables)
        tables.clear()
        return ProjectionRunner(verity, TableReadModels(tables)).run_once()
    finally:
        if isinstance(tables, PostgresTables):
            tables.close()
