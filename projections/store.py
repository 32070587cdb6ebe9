"""The read models as the console sees them (`ReadModels`), and their one implementation over `Tables`.

`TableReadModels(MemoryTables())` is the in-memory read model of unit tests; over `SqliteTables` or
`PostgresTables` it is the SQL one. Both apply a page of events and every projection's position in one
transaction.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, Protocol
from uuid import UUID

from domain.runs import messages
from domain.runs.objectives import OBJECTIVE_NAMES
from domain.runs.run import RUNNING
from projections.access import AccessReads
from projections.catalog_reads import CatalogReads
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
)
from projections.tables import TABLE_KEYS, MemoryTables, PageBuffer, Row, Tables
from projections.views import Event, Projection, all_projections

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
    def rounds(self, org_id: UUID, run_id: UUID) -> list[RoundRow]: ...
    def samples(self, org_id: UUID, run_id: UUID) -> list[RolloutFileRow]: ...
    def steps(self, org_id: UUID, run_id: UUID) -> list[StepRow]: ...
    def timeline(self, org_id: UUID, run_id: UUID) -> list[TimelineEntry]: ...
    def feed(self, org_id: UUID, after: int, limit: int) -> list[FeedEntry]: ...
    def position(self) -> int: ...
    def wait_for(self, position: int, timeout: float = 5.0) -> bool: ...
    def apply(self, events: Sequence[Event]) -> int: ...
    # who may do what (projections/access.py)
    def members(self, org_id: UUID) -> list[Any]: ...
    def memberships_of(self, account_id: UUID) -> list[Any]: ...
    def api_tokens(self, org_id: UUID) -> list[Any]: ...


LIVE_STATES = ("queued", "preparing", "training", "saving_adapter")


def is_live(state: str, kind: str, stopped: bool) -> bool:
    """Whether more will happen to a run by itself. A full run that did all its rounds shows Adapter ready and
    then Completed; one that stopped early (time limit, metric failures, memory) stays Adapter ready: it ended.
    """
    return state in LIVE_STATES or (state == "adapter_ready" and kind == "full" and not stopped)


def _uuid(value: str | None) -> UUID | None:
    return UUID(value) if value else None


def _json(value: str | None) -> Any:
    return json.loads(value) if value else None


def _run_row(r: Row) -> RunRow:
    return RunRow(
        id=UUID(r["id"]),
        org_id=UUID(r["org_id"]),
        project_id=UUID(r["project_id"]),
        name=r["name"],
        kind=r["kind"],
        state=r["state"],
        status_line=r["status_line"],
        rounds_total=r["rounds_total"],
        rounds_done=max(r["rounds_scored"] - 1, 0),
        best_round=r["best_round"],
        best_validation=r["best_validation"],
        reward_label=r["reward_label"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        objective=r["objective"],
        steps_logged=r["steps_logged"],
        steps_total=r["steps_total"],
    )


class TableReadModels(AccessReads, CatalogReads):
    def __init__(self, tables: Tables, projections: list[Projection] | None = None) -> None:
        self.tables = tables
        self.projections = projections or all_projections()

    # --- writing -------------------------------------------------------------------------------------------
    def positions(self) -> dict[str, int]:
        rows = {row["name"]: row["log_position"] for row in self.tables.select("projection_positions", {})}
        return {projection.name: int(rows.get(projection.name, 0)) for projection in self.projections}

    def apply(self, events: Sequence[Event]) -> int:
        """Applies a page of events (in log order) and each projection's new position in one transaction.

        A projection skips the events at or before its own position, so a page may be applied again safely.
        """
        if not events:
            return 0
        last = events[-1].position
        with self.tables.transaction() as connection:
            connection.lock()  # another runner applying the same page waits, then skips what is done
            tx = PageBuffer(connection)
            applied = 0
            for projection in self.projections:
                row = tx.get("projection_positions", {"name": projection.name})
                reached = int(row["log_position"]) if row else 0
                if reached >= last:
                    continue
                for event in events:
                    if event.position > reached:
                        projection.apply(tx, event)
                        applied += 1
                tx.upsert("projection_positions", {"name": projection.name, "log_position": last})
            tx.flush()
        return len(events) if applied else 0

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
        return [OrganizationRow(UUID(r["id"]), r["name"], r["plan"], r["created_at"]) for r in rows]

    def projects(self, org_id: UUID) -> list[ProjectRow]:
        rows = self.tables.select("projects", {"org_id": str(org_id)}, order=[("name", False)])
        return [
            ProjectRow(
                UUID(r["id"]),
                UUID(r["org_id"]),
                r["name"],
                r["model"],
                r["revision"],
                bool(r["vision"]),
                r["created_at"],
                json.loads(r.get("run_defaults") or "{}"),
            )
            for r in rows
        ]

    def runs(self, org_id: UUID, project_id: UUID | None = None) -> list[RunRow]:
        where = {"org_id": str(org_id)}
        if project_id is not None:
            where["project_id"] = str(project_id)
        rows = self.tables.select("runs", where, order=[("created_position", True)])
        return [_run_row(r) for r in rows if r["state"] != "deleted"]  # a deleted draft leaves the list

    def live_runs(self) -> list[RunRow]:
        """Every organization's runs that a worker holds or should hold (Queued, Preparing, Training, Saving
        adapter), oldest first: what the reconciler checks on each pass (index runs_by_state)."""
        rows = [row for state in RUNNING for row in self.tables.select("runs", {"state": state})]
        return [_run_row(r) for r in sorted(rows, key=lambda row: row["created_position"])]

    def merging_runs(self) -> list[UUID]:
        """Every organization's runs whose Merge model is under way (index run_details_by_merge_state)."""
        return [UUID(r["id"]) for r in self.tables.select("run_details", {"merge_state": "merging"})]

    def run(self, org_id: UUID, run_id: UUID) -> RunDetail | None:
        rows = self.tables.select("run_details", {"id": str(run_id), "org_id": str(org_id)})
        if not rows:
            return None
        r = rows[0]
        stop = _json(r["stop_json"])
        adapter = _json(r["adapter_json"])
        done = max(r["rounds_scored"] - 1, 0)
        total = r["rounds_total"]
        settings = json.loads(r["settings_json"])
        objective = settings["training"].get("objective", "rl")
        ended = None
        stop_log_line = None
        if stop is not None and objective != "rl":  # SFT and DPO: steps, and the last step's adapter
            ended = messages.stopped_steps_line(stop["reason"], stop["after_round"])
            stop_log_line = messages.stopped_steps_log_line(
                OBJECTIVE_NAMES.get(objective, objective.upper()), stop["reason"], stop["after_round"]
            )
        elif stop is not None:
            ended = messages.stopped_line(stop["reason"], stop["after_round"], total, stop["best_round"])
            stop_log_line = messages.stopped_log_line(stop["reason"], stop["after_round"], total, stop["best_round"])
        elif r["state"] in ("adapter_ready", "completed") and r["kind"] == "full" and objective != "rl":
            ended = messages.completed_steps_line(adapter["best_round"] if adapter else 0)
        elif r["state"] in ("adapter_ready", "completed") and r["kind"] == "full":
            ended = messages.completed_line(total, r["best_round"] or 0)
        elif r["state"] == "failed":
            ended = "Failed"
        elif r["state"] == "cancelled":
            ended = "Cancelled"
        kept = None
        if adapter is not None and adapter["best_round"] == 0 and objective == "rl":
            kept = messages.KEPT_STARTING_ADAPTER
        return RunDetail(
            id=UUID(r["id"]),
            org_id=UUID(r["org_id"]),
            project_id=UUID(r["project_id"]),
            model=r["model"],
            name=r["name"],
            kind=r["kind"],
            state=r["state"],
            status_line=r["status_line"],
            settings=settings,
            reward_label=r["reward_label"],
            start_run=_uuid(r["start_run"]),
            rounds_total=total,
            rounds_done=done,
            progress=min(done / total, 1.0) if total else 0.0,
            best_round=r["best_round"],
            best_validation=r["best_validation"],
            adapter=adapter,
            ended=ended,
            note=stop["note"] if stop else None,
            stop_reason=stop["reason"] if stop else None,
            stop_log_line=stop_log_line,
            kept_starting_adapter=kept,
            failure=r["failure"],
            trial_report=_json(r["trial_report_json"]),
            merge=_json(r["merge_json"]),
            retry_of=_uuid(r["retry_of"]),
            retried_as=_uuid(r["retried_as"]),
            duplicate_of=_uuid(r["duplicate_of"]),
            duplicates=[UUID(value) for value in json.loads(r["duplicates_json"])],
            launched_at=r["launched_at"],
            ended_at=r["ended_at"],
            created_at=r["created_at"],
            updated_at=r["updated_at"],
            live=is_live(r["state"], r["kind"], stop is not None),
            start_run_name=self._run_name(org_id, r["start_run"]),
        )

    def _run_name(self, org_id: UUID, run_id: str | None) -> str:
        """A run's name as the console shows it ("Untitled run" when it has none); "" for no run."""
        if not run_id:
            return ""
        rows = self.tables.select("run_details", {"id": str(run_id), "org_id": str(org_id)})
        return (rows[0]["name"] or "Untitled run") if rows else ""

    def rounds(self, org_id: UUID, run_id: UUID) -> list[RoundRow]:
        rows = self.tables.select(
            "rounds", {"run_id": str(run_id), "org_id": str(org_id)}, order=[("round_number", True)]
        )
        return [
            RoundRow(**{**r, "run_id": UUID(r["run_id"]), "updated": bool(r["updated"])})
            for r in ({k: v for k, v in row.items() if k != "org_id"} for row in rows)
        ]

    def samples(self, org_id: UUID, run_id: UUID) -> list[RolloutFileRow]:
        rows = self.tables.select(
            "rollout_files", {"run_id": str(run_id), "org_id": str(org_id)}, order=[("round_number", True)]
        )
        return [RolloutFileRow(UUID(r["run_id"]), r["round_number"], r["path"], r["written_at"]) for r in rows]

    def steps(self, org_id: UUID, run_id: UUID) -> list[StepRow]:
        """An SFT or DPO run's steps, newest first."""
        rows = self.tables.select("run_steps", {"run_id": str(run_id), "org_id": str(org_id)}, order=[("step", True)])
        return [
            StepRow(**{**r, "run_id": UUID(r["run_id"])})
            for r in ({k: v for k, v in row.items() if k != "org_id"} for row in rows)
        ]

    def timeline(self, org_id: UUID, run_id: UUID) -> list[TimelineEntry]:
        rows = self.tables.select(
            "timeline", {"run_id": str(run_id), "org_id": str(org_id)}, order=[("log_position", False)]
        )
        return [
            TimelineEntry(
                r["log_position"],
                r["occurred_at"],
                r["actor_kind"],
                r["actor_name"],
                r["event_type"],
                r["sentence"],
            )
            for r in rows
        ]

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
