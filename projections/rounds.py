"""A run's rounds (one row per Run.RoundScored) and the index of its rollout files (round-NNN.jsonl)."""

from __future__ import annotations

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
            "log_line": messages.round_log_line(result, total, e.data["best_round"]),
            "scored_at": e.time,
        }


class Samples(RunRows):
    """The index of rollout files: the trainer writes round-NNN.jsonl for every round it trains."""

    name = "samples"
    event_type = "Run.RoundScored"
    table = "rollout_files"

    def row(self, e: Event, place: Row) -> Row | None:
        number = e.data["result"]["round_number"]
        if number < 1:
            return None
        return {
            "round_number": number,
            "org_id": place["org_id"],
            "written_at": e.time,
            "path": f"runs/{e.aggregate_id}/rollouts/round-{number:03d}.jsonl",
        }
