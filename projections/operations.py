"""What the whole console holds, summed for its operators: runs by state and the finished rounds' totals.

Read from the shared read models at each scrape (app/service/prometheus.py), so every web process answers the same
figures and none keeps a count of its own that a restart would lose. On PostgreSQL and SQLite the sums are one
GROUP BY each; the in-memory tables of the tests add up their rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from projections.tables import SqlTables

PHASES = ("sampling", "grading", "update", "validation")


@dataclass(frozen=True)
class OperationsTotals:
    runs_by_state: dict[str, int] = field(default_factory=dict)
    rounds_finished: int = 0  # rounds trained (round 0, the starting adapter's validation, is not one)
    phase_seconds: dict[str, float] = field(default_factory=dict)  # over every round, round 0's validation included
    metric_failures: int = 0  # graded answers whose metric failed, over every round


_ROUND_SUMS = ", ".join(f"SUM({phase}_seconds)" for phase in PHASES)


def operations_totals(tables: Any) -> OperationsTotals:
    if isinstance(tables, SqlTables):
        with tables.reading_cursor() as cursor:
            cursor.execute("SELECT state, COUNT(*) FROM run_details GROUP BY state")
            states = {state: int(count) for state, count in _tuples(cursor)}
            cursor.execute(
                f"SELECT SUM(CASE WHEN round_number >= 1 THEN 1 ELSE 0 END), {_ROUND_SUMS}, SUM(metric_failures) "
                "FROM rounds"
            )
            finished, *sums, failures = _tuples(cursor)[0]
    else:
        states = {}
        for run in tables.select("run_details", {}):
            states[run["state"]] = states.get(run["state"], 0) + 1
        rounds = tables.select("rounds", {})
        finished = sum(1 for r in rounds if r["round_number"] >= 1)
        sums = [sum(r[f"{phase}_seconds"] or 0.0 for r in rounds) for phase in PHASES]
        failures = sum(r["metric_failures"] or 0 for r in rounds)
    return OperationsTotals(
        runs_by_state=states,
        rounds_finished=int(finished or 0),
        phase_seconds={phase: float(total or 0.0) for phase, total in zip(PHASES, sums, strict=True)},
        metric_failures=int(failures or 0),
    )


def _tuples(cursor: Any) -> list[tuple]:
    """Rows as tuples, whatever row factory the connection has (psycopg's pool may give dicts)."""
    return [tuple(row.values()) if isinstance(row, dict) else tuple(row) for row in cursor.fetchall()]
