"""A run's rounds: one row per Run.RoundScored, which also index its rollout files (projections/run_reads.py). A
round's log line is not stored: it is written from the row when the round is read."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from domain.rewards.types import SCORED_BATCH
from projections.base import Event
from projections.run_rows import RunRows
from projections.tables import Row


class Rounds(RunRows):
    name = "rounds"
    event_type = "Run.RoundScored"

    def row(self, e: Event, place: Row) -> Row:
        result = e.data["result"]
        get = result.get
        row = {column: get(column, default) for column, default in _RESULT_DEFAULTS}
        # item by item: a keyword call to update() builds a second dict of them first (catch-up makes a row an event)
        row["round_number"] = result["round_number"]
        row["validation_reward"] = result["validation_reward"]
        row["org_id"] = place["org_id"]
        row["rounds_total"] = place["total_rounds"]
        row["updated"] = int(bool(get("updated")))
        row["best_round"] = e.data["best_round"]
        row.update(_health(result))
        row["scored_at"] = e.time
        return row


# The round result's own columns but its number and validation reward, each at its value where an older round's
# result lacks it.
_RESULT_DEFAULTS: tuple[tuple[str, Any], ...] = tuple({
    "metric_failures": 0,
    "sampling_seconds": 0.0,
    "grading_seconds": 0.0,
    "update_seconds": 0.0,
    "validation_seconds": 0.0,
    **dict.fromkeys(
        ("reward", "signal", "cut_off", "loss", "passes", "mean_answer_tokens", "token_entropy", "peak_memory_bytes",
         "accuracy", "clipped", "grad_norm", "grading_seconds_median", "grading_seconds_p95")
    ),
}.items())


# shared by every such round, so read-only
_HEALTHY_BUILT_IN: Mapping[str, Any] = MappingProxyType(
    {"failures_by_kind_json": None, "sandbox_batches": None, "sandbox_failed_batches_json": None}
)


def _health(result: dict[str, Any]) -> Mapping[str, Any]:
    """The reward's health columns: failures by kind and the sandbox's failed batches as JSON, none when there are
    none (so a sum reads only the rows that have some), and the sandbox's batches in all (none for a built-in
    reward)."""
    kinds, batches = result.get("failures_by_kind"), result.get("sandbox_batches")
    if not kinds and batches is None:  # most rounds: a built-in reward that failed nothing
        return _HEALTHY_BUILT_IN
    failed = {outcome: n for outcome, n in (batches or {}).items() if outcome != SCORED_BATCH and n}
    return {
        "failures_by_kind_json": json.dumps(kinds, sort_keys=True) if kinds else None,
        "sandbox_batches": sum(batches.values()) if batches is not None else None,
        "sandbox_failed_batches_json": json.dumps(failed, sort_keys=True) if failed else None,
    }
