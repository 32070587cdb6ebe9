"""A run's rounds: one row per Run.RoundScored, which also index its rollout files (projections/run_reads.py)."""

from __future__ import annotations

import json
from typing import Any

from domain.rewards.types import SCORED_BATCH
from domain.runs import messages
from projections.base import Event
from projections.run_rows import RunRows
from projections.tables import Row


class Rounds(RunRows):
    name = "rounds"
    event_type = "Run.RoundScored"

    def row(self, e: Event, place: Row) -> Row:
        result = e.data["result"]
        total = place["total_rounds"]
        return {
            "round_number": result["round_number"],
            "org_id": place["org_id"],
            "rounds_total": total,
            "reward": result.get("reward"),
            "signal": result.get("signal"),
            "cut_off": result.get("cut_off"),
            "metric_failures": result.get("metric_failures", 0),
            "updated": int(bool(result.get("updated"))),
            "loss": result.get("loss"),
            "validation_reward": result["validation_reward"],
            "best_round": e.data["best_round"],
            **{
                key: result.get(key, 0.0)
                for key in ("sampling_seconds", "grading_seconds", "update_seconds", "validation_seconds")
            },
            "mean_answer_tokens": result.get("mean_answer_tokens"),
            "token_entropy": result.get("token_entropy"),
            "peak_memory_bytes": result.get("peak_memory_bytes"),
            "accuracy": result.get("accuracy"),
            "clipped": result.get("clipped"),
            "grad_norm": result.get("grad_norm"),
            **_health(result),
            "grading_seconds_median": result.get("grading_seconds_median"),
            "grading_seconds_p95": result.get("grading_seconds_p95"),
            "log_line": messages.round_log_line(result, total, e.data["best_round"]),
            "scored_at": e.time,
        }


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
