"""`verity projections rebuild`: empty every read model and apply the whole event log again, saying how far it got.

A rebuild of a million events takes a minute or more (bench/events.py: 40-90 s on SQLite and PostgreSQL on a 2-core
machine): the command says where it is in the log every few seconds, and how long it has left at its pace.
"""

from __future__ import annotations

from collections.abc import Callable

from migrations import apply_to
from projections.runner import ProjectionRunner
from projections.sql_tables import PostgresTables, open_tables
from projections.store import TableReadModels
from verity.config import Settings


def rebuild_all(settings: Settings, after_page: Callable[[int, int], None] | None = None) -> int:
    """Returns how many events the read models were rebuilt from. `after_page` is told, after each page of events
    (a transaction), the log's position reached and its last event's when the rebuild began."""
    from verity.wiring import build_application  # wiring imports projections: import it when called

    verity = build_application(settings)
    tables = open_tables(settings)
    try:
        apply_to(tables)
        tables.clear()
        last = verity.recorder.max_notification_id() or 0
        reached = None if after_page is None else lambda position: after_page(position, last)
        return ProjectionRunner(verity, TableReadModels(tables)).run_once(reached)
    finally:
        if isinstance(tables, PostgresTables):
            tables.close()


def progress_words(position: int, last: int, seconds: float) -> str:
    """Where a rebuild is, `seconds` after it began, at position `position` of a log whose last event is `last`.

    >>> progress_words(240_000, 1_000_000, 10.0)
    'Rebuilding the read models: event 240,000 of 1,000,000 (24,000 a second, about 32 s left).'
    >>> progress_words(1_000_000, 1_000_000, 41.7)
    'Rebuilding the read models: event 1,000,000 of 1,000,000 (23,981 a second, about 0 s left).'
    """
    pace = position / seconds if seconds > 0 else 0.0
    left = f", about {max(last - position, 0) / pace:.0f} s left" if pace else ""
    return f"Rebuilding the read models: event {position:,} of {max(last, position):,} ({pace:,.0f} a second{left})."
