"""A run's rounds (one row per Run.RoundScored) and the index of its rollout files (round-NNN.jsonl)."""

from __future__ import annotations

from domain.runs import messages
from projections.base import Event, Projection
from projections.directory import directory_entry
from projections.tables import Tx


class Rounds(Projection):
    name = "rounds"

    def __init__(self) -> None:
        self.handlers = {"Run.RoundScored": self._scored}

    def _scored(self, tx: Tx, e: Event) -> None:
        place = directory_entry(tx, e)
        if place is None:
            return
        result = e.data["result"]
        total = place["total_rounds"]
        tx.upsert(
            "rounds",
            {
                "run_id": str(e.aggregate_id),
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
                "log_line": messages.round_log_line(result, total, e.data["best_round"]),
                "scored_at": e.time,
            },
        )


class Samples(Projection):
    """The index of rollout files: the trainer writes round-NNN.jsonl for every round it trains."""

    name = "samples"

    def __init__(self) -> None:
        self.handlers = {"Run.RoundScored": self._scored}

    def _scored(self, tx: Tx, e: Event) -> None:
        number = e.data["result"]["round_number"]
        place = directory_entry(tx, e)
        if number < 1 or place is None:
            return
        tx.upsert(
            "rollout_files",
            {
                "run_id": str(e.aggregate_id),
                "round_number": number,
                "org_id": place["org_id"],
                "written_at": e.time,
                "path": f"runs/{e.aggregate_id}/rollouts/round-{number:03d}.jsonl",
            },
        )
