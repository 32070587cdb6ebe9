"""The read models as the console sees them (`ReadModels`), and their one implementation over `Tables`.

`TableReadModels(MemoryTables())` is the in-memory read model of unit tests; over `SqliteTables` or
`PostgresTables` it is the SQL one. Both apply a page of events and every projection's position in one
transaction. The reads live beside it as mixins: of runs (projections/run_reads.py), of who may do what
(projections/access.py) and of the catalog (projections/catalog_reads.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Protocol
from uuid import UUID

from projections.access import AccessReads
from projections.base import Event, Handler, Projection
from projections.catalog_reads import CatalogReads
from projections.memory_tables import MemoryTables
from projections.page_buffer import PageBuffer
from projections.prompt_reads import PromptReads
from projections.registry import all_projections
from projections.rows import (
    FeedEntry,
    OrganizationRow,
    ProjectRow,
    RolloutFileRow,
    RoundRow,
    RunDetail,
    RunRow,
    StepRow,
    TimelineEntry,
    read_row,
)
from projections.run_reads import RunReads
from projections.tables import TABLE_KEYS, Order, Row, Tables

__all__ = [
    "FeedEntry",
    "OrganizationRow",
    "ProjectRow",
    "ReadModels",
    "RolloutFileRow",
    "RoundRow",
    "RunDetail",
    "RunRow",
    "StepRow",
    "TableReadModels",
    "TimelineEntry",
    "memory_read_models",
]


class ReadModels(Protocol):
    def organizations(self) -> list[OrganizationRow]: ...
    def projects(self, org_id: UUID) -> list[ProjectRow]: ...
    def runs(self, org_id: UUID, project_id: UUID | None = None) -> list[RunRow]: ...
    def live_runs(self) -> list[RunRow]: ...
    def merging_runs(self) -> list[UUID]: ...
    def run(self, org_id: UUID, run_id: UUID) -> RunDetail | None: ...
    def rounds(self, org_id: UUID, run_id: UUID, after: int | None = None,
               newest: int | None = None) -> list[RoundRow]: ...
    def round_count(self, org_id: UUID, run_id: UUID) -> int: ...
    def round_figures(self, org_id: UUID, run_id: UUID, figures: tuple[str, ...],
                      after: int | None = None) -> dict[str, list[Any]]: ...
    def round_seconds(self, org_id: UUID, run_id: UUID, after: int | None = None) -> list[tuple[int, float]]: ...
    def samples(self, org_id: UUID, run_id: UUID, newest: int | None = None) -> list[RolloutFileRow]: ...
    def steps(self, org_id: UUID, run_id: UUID) -> list[StepRow]: ...
    # the Prompts tab (projections/prompt_reads.py)
    def prompt_histories(self, org_id: UUID, run_id: UUID) -> list[Any]: ...
    def prompt_page(self, org_id: UUID, run_id: UUID, *, order: Order, verdict: str | None = None, offset: int = 0,
                    limit: int | None = None) -> list[Any]: ...
    def prompt_verdicts(self, org_id: UUID, run_id: UUID) -> dict[str, int]: ...
    def prompt_draws(self, org_id: UUID, run_id: UUID, prompt_index: int | None = None) -> dict[int, list[Any]]: ...
    def prompt_costs(self, org_id: UUID, run_id: UUID, newest: int | None = None) -> list[Any]: ...
    def prompt_cost_rounds(self, org_id: UUID, run_id: UUID) -> int: ...
    def prompt_cost_total(self, org_id: UUID, run_id: UUID) -> Any: ...
    def timeline(self, org_id: UUID, run_id: UUID, newest: int | None = None) -> list[TimelineEntry]: ...
    def timeline_length(self, org_id: UUID, run_id: UUID) -> int: ...
    def feed(self, org_id: UUID, after: int, limit: int) -> list[FeedEntry]: ...
    def position(self) -> int: ...
    def wait_for(self, position: int, timeout: float = 5.0) -> bool: ...
    def apply(self, events: Sequence[Event]) -> int: ...
    # who may do what (projections/access.py)
    def members(self, org_id: UUID) -> list[Any]: ...
    def memberships_of(self, account_id: UUID) -> list[Any]: ...
    def api_tokens(self, org_id: UUID) -> list[Any]: ...


class TableReadModels(AccessReads, CatalogReads, RunReads, PromptReads):
    def __init__(self, tables: Tables, projections: list[Projection] | None = None) -> None:
        self.tables = tables
        self.projections = projections or all_projections()
        self._handlers: dict[str, list[tuple[int, Handler]]] = {}

    # --- writing -------------------------------------------------------------------------------------------
    def positions(self) -> dict[str, int]:
        rows = {row["name"]: row["log_position"] for row in self.tables.select("projection_positions", {})}
        return {projection.name: int(rows.get(projection.name, 0)) for projection in self.projections}

    def apply(self, events: Sequence[Event]) -> int:
        """Applies a page of events (in log order) and each projection's new position in one transaction.

        Each event goes through every projection before the next one does, as if the page were applied an event at
        a time, so what a projection reads of another (the directory, a run's objective) is as it stood at that
        event, whatever the page's size. The page's rows are read and written once each (projections/page_buffer.py),
        together with the positions. A projection skips the events at or before its own position, so a page may be
        applied again safely.
        """
        if not events:
            return 0
        last = events[-1].position
        with self.tables.transaction() as connection:
            connection.lock()  # another runner applying the same page waits, then skips what is done
            stored = {row["name"]: int(row["log_position"]) for row in connection.select("projection_positions", {})}
            reached = [stored.get(projection.name, 0) for projection in self.projections]
            behind = min(reached)
            if behind >= last:
                return 0
            tx = PageBuffer(connection)
            for event in events:
                if event.position <= behind:
                    continue
                for index, handler in self._handlers_of(event.type):
                    if event.position > reached[index]:
                        handler(tx, event)
            for projection, position in zip(self.projections, reached, strict=True):
                if position < last:
                    tx.upsert("projection_positions", {"name": projection.name, "log_position": last})
            tx.flush()
        return len(events)

    def _handlers_of(self, event_type: str) -> list[tuple[int, Handler]]:
        """The handlers of an event type, in the projections' order, with each projection's index."""
        handlers = self._handlers.get(event_type)
        if handlers is None:
            handlers = self._handlers[event_type] = [
                (index, handler)
                for index, projection in enumerate(self.projections)
                if (handler := projection.handler_for(event_type)) is not None
            ]
        return handlers

    def position(self) -> int:
        """The position every projection has reached."""
        return min(self.positions().values(), default=0)

    def wait_for(self, position: int, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            if self.position() >= position:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def dump(self) -> dict[str, list[Row]]:
        """Every row of every table, in key order: what a rebuild must reproduce."""
        return {
            table: sorted(self.tables.select(table, {}), key=lambda row, t=table: tuple(row[k] for k in TABLE_KEYS[t]))
            for table in TABLE_KEYS
        }

    # --- reading -------------------------------------------------------------------------------------------
    def organizations(self) -> list[OrganizationRow]:
        rows = self.tables.select("organizations", {}, order=[("name", False)])
        return [read_row(OrganizationRow, r) for r in rows]

    def projects(self, org_id: UUID) -> list[ProjectRow]:
        rows = self.tables.select("projects", {"org_id": str(org_id)}, order=[("name", False)])
        return [read_row(ProjectRow, r, run_defaults=json.loads(r.get("run_defaults") or "{}")) for r in rows]

    def feed(self, org_id: UUID, after: int, limit: int) -> list[FeedEntry]:
        rows = self.tables.select(
            "feed",
            {"org_id": str(org_id)},
            order=[("log_position", False)],
            after=("log_position", after),
            limit=limit,
        )
        return [
            FeedEntry(
                r["log_position"],
                r["event_type"],
                r["occurred_at"],
                UUID(r["aggregate_id"]),
                r["aggregate_version"],
                json.loads(r["actor_json"]),
                json.loads(r["data_json"]),
            )
            for r in rows
        ]


def memory_read_models() -> TableReadModels:
    """The in-memory read models of unit tests."""
    return TableReadModels(MemoryTables())
