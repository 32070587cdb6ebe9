"""What the whole console holds, summed for its operators: runs by state and the finished rounds' totals.

Read from the shared read models at each scrape (app/service/prometheus.py), so every web process answers the same
figures and none keeps a count of its own that a restart would lose. On PostgreSQL and SQLite the sums are one
GROUP BY each; the in-memory tables of the tests add up their rows. The reward's health by kind is JSON on the
rounds that have any (failures, failed sandbox batches), so only those rows are read and added up here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from domain.rewards.types import BATCH_OUTCOMES, FAILURE_KINDS, SCORED_BATCH
from projections.sql_tables import SqlTables

PHASES = ("sampling", "grading", "update", "validation")


@dataclass(frozen=True)
class OperationsTotals:
    runs_by_state: dict[str, int] = field(default_factory=dict)
    rounds_finished: int = 0  # rounds trained (round 0, the starting adapter's validation, is not one)
    phase_seconds: dict[str, float] = field(default_factory=dict)  # over every round, round 0's validation included
    metric_failures: int = 0  # graded answers whose metric failed, over every round
    # the same failures by kind, every kind named (0 when none yet); rounds recorded before kinds were counted add
    # theirs to none, so the kinds may sum to less than metric_failures
    failures_by_kind: dict[str, int] = field(default_factory=dict)
    # custom metrics' sandbox batches by outcome: "scored", or the kind of the batch's first failure (every one named)
    sandbox_batches: dict[str, int] = field(default_factory=dict)


_ROUND_SUMS = ", ".join(f"SUM({phase}_seconds)" for phase in PHASES)
_HEALTH_JSON = ("failures_by_kind_json", "sandbox_failed_batches_json")


def operations_totals(tables: Any) -> OperationsTotals:
    if isinstance(tables, SqlTables):
        with tables.reading_cursor() as cursor:
            cursor.execute("SELECT state, COUNT(*) FROM run_details GROUP BY state")
            states = {state: int(count) for state, count in _tuples(cursor)}
            cursor.execute(
                f"SELECT SUM(CASE WHEN round_number >= 1 THEN 1 ELSE 0 END), {_ROUND_SUMS}, SUM(metric_failures), "
                "SUM(sandbox_batches) FROM rounds"
            )
            finished, *sums, failures, batches = _tuples(cursor)[0]
            cursor.execute(
                f"SELECT {', '.join(_HEALTH_JSON)} FROM rounds "
                f"WHERE {' OR '.join(f'{column} IS NOT NULL' for column in _HEALTH_JSON)}"
            )
            health = _tuples(cursor)
    else:
        states = {}
        for run in tables.select("run_details", {}):
            states[run["state"]] = states.get(run["state"], 0) + 1
        rounds = tables.select("rounds", {})
        finished = sum(1 for r in rounds if r["round_number"] >= 1)
        sums = [sum(r[f"{phase}_seconds"] or 0.0 for r in rounds) for phase in PHASES]
        failures = sum(r["metric_failures"] or 0 for r in rounds)
        batches = sum(r.get("sandbox_batches") or 0 for r in rounds)
        health = [tuple(r.get(column) for column in _HEALTH_JSON) for r in rounds]
    by_kind = _summed(kinds for kinds, _ in health)
    failed_batches = _summed(failed for _, failed in health)
    return OperationsTotals(
        runs_by_state=states,
        rounds_finished=int(finished or 0),
        phase_seconds={phase: float(total or 0.0) for phase, total in zip(PHASES, sums, strict=True)},
        metric_failures=int(failures or 0),
        failures_by_kind={**dict.fromkeys(FAILURE_KINDS, 0), **by_kind},
        sandbox_batches={
            **dict.fromkeys(BATCH_OUTCOMES, 0), **failed_batches,
            SCORED_BATCH: int(batches or 0) - sum(failed_batches.values()),
        },
    )


def _summed(documents: Iterable[str | None]) -> dict[str, int]:
    """Counts by name added up over JSON documents such as {"timeout": 8, "execution": 2}; None adds nothing."""
    total: Counter[str] = Counter()
    for document in documents:
        if document:
            total.update({name: int(count) for name, count in json.loads(document).items()})
    return dict(total)


def _tuples(cursor: Any) -> list[tuple]:
    """Rows as tuples, whatever row factory the connection has (psycopg's pool may give dicts)."""
    return [tuple(row.values()) if isinstance(row, dict) else tuple(row) for row in cursor.fetchall()]
