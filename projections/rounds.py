"""A run's rounds: one row per Run.RoundScored, which also index its rollout files (projections/run_reads.py). A
round's log line is not stored: it is written from the row when the round is read."""

from __future__ import annotations

import json
from operator import itemgetter
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
        total = place["total_rounds"]
        best = e.data["best_round"]
        # the result's columns in one C call, those an older round lacks at their default
        row = dict(zip(_RESULT_COLUMNS, _result_values({**_RESULT_DEFAULTS, **result}), strict=True))
        row.update(
            org_id=place["org_id"],
            rounds_total=total,
            updated=int(bool(result.get("updated"))),
            best_round=best,
            **_health(result),
            scored_at=e.time,
        )
        return row


# The round result's own columns: every one of them but these is in every round's result since the first.
_RESULT_DEFAULTS: dict[str, Any] = {
    "metric_failures": 0,
    "sampling_seconds": 0.0,
    "grading_seconds": 0.0,
    "update_seconds": 0.0,
    "validation_seconds": 0.0,
    **dict.fromkeys(
        ("reward", "signal", "cut_off", "loss", "passes", "mean_answer_tokens", "token_entropy", "peak_memory_bytes",
         "accuracy", "clipped", "grad_norm", "grading_seconds_median", "grading_seconds_p95")
    ),
}
_RESULT_COLUMNS = ("round_number", "validation_reward", *_RESULT_DEFAULTS)
_result_values = itemgetter(*_RESULT_COLUMNS)


def _health(result: dict[str, Any]) -> Row:
    """The reward's health columns: failures by kind and the sandbox's failed batches as JSON, none when there are
    none (so a sum reads only the rows that have some), and the sandbox's batches in all (none for a built-in
    reward)."""
    kinds, batches = result.get("failures_by_kind"), result.get("sandbox_batches")
    failed = {outcome: n for outcome, n in (batches or {}).items() if outcome != SCORED_BATCH and n}
    return {
        "failures_by_kind_json": json.dumps(kinds, sort_keys=True) if kinds else None,
        "sandbox_batches": sum(batches.values()) if batches is not None else None,
        "sandbox_failed_batches_json": json.dumps(failed, sort_keys=True) if failed else None,
    }
