"""The Prompts tab's read models, from each round's prompts (RoundResult.prompts): every draw of a training prompt
(prompt_rounds), each prompt's history in one row with its verdict (prompt_histories), and each round's cost of the
groups that taught nothing (prompt_costs). The history row is kept up to date draw by draw, in round order (a run's
rounds are recorded in order), so the tab reads one row per prompt however many rounds the run has."""

from __future__ import annotations

from typing import Any

from domain.runs.prompt_verdicts import PromptTally, draw_passed, group_seconds, round_cost
from projections.base import Event, Projection
from projections.directory import directory_entry
from projections.tables import Row, Tx


class PromptHistories(Projection):
    name = "prompt_histories"

    def __init__(self) -> None:
        self.handlers = {"Run.RoundScored": self._scored}

    def _scored(self, tx: Tx, e: Event) -> None:
        result = e.data["result"]
        prompts = result.get("prompts")
        if not prompts or not prompts["index"]:  # round 0, or a round recorded before prompts were
            return
        place = directory_entry(tx, e)
        if place is None:
            return
        run_id, org_id, number = e.aggregate_key, place["org_id"], result["round_number"]
        answers = prompts["answers"] or 1
        means, taught, tokens = prompts["mean"], [bool(t) for t in prompts["taught"]], prompts["tokens"]
        sampling = float(result.get("sampling_seconds") or 0.0)
        seconds = group_seconds(sampling, tokens)
        for position, index in enumerate(prompts["index"]):
            share = prompts["passed"][position] / answers
            tx.upsert("prompt_rounds", {
                "run_id": run_id, "prompt_index": index, "round_number": number, "org_id": org_id,
                "position": position, "mean_score": means[position], "pass_share": share,
                "taught": int(taught[position]), "tokens": tokens[position], "sampling_seconds": seconds[position],
            })
            key = {"run_id": run_id, "prompt_index": index}
            tx.upsert("prompt_histories", _drawn(tx.get("prompt_histories", key), key, org_id, number,
                                                 means[position], share, taught[position], tokens[position],
                                                 seconds[position]))
        cost = round_cost(sampling, means, taught, tokens)
        tx.upsert("prompt_costs", {
            "run_id": run_id, "round_number": number, "org_id": org_id, "prompts": cost.groups,
            "dead_groups": cost.dead_groups, "too_easy": cost.too_easy, "too_hard": cost.too_hard,
            "sampling_seconds": cost.seconds, "dead_seconds": cost.dead_seconds, "tokens": cost.tokens,
            "dead_tokens": cost.dead_tokens,
        })


def _drawn(history: Row | None, key: Row, org_id: Any, number: int, mean: float, share: float, taught: bool,
           tokens: int, seconds: float) -> Row:
    """The prompt's history row after one more draw, its latest."""
    h = history or {"draws": 0, "passed_draws": 0, "taught_draws": 0, "first_passed": 0, "last_passed": 0,
                    "first_round": number, "score_sum": 0.0, "pass_share_sum": 0.0, "tokens": 0, "dead_tokens": 0,
                    "sampling_seconds": 0.0, "dead_seconds": 0.0}
    tally = PromptTally(h["draws"], h["passed_draws"], h["taught_draws"], bool(h["first_passed"]),
                        bool(h["last_passed"])).drawn(draw_passed(share), taught)
    return {
        **key, "org_id": org_id, "verdict": tally.verdict, "draws": tally.draws, "passed_draws": tally.passed,
        "taught_draws": tally.taught, "first_passed": int(tally.first_passed), "last_passed": int(tally.last_passed),
        "first_round": h["first_round"], "last_round": number, "score_sum": h["score_sum"] + mean,
        "pass_share_sum": h["pass_share_sum"] + share, "mean_score": (h["score_sum"] + mean) / tally.draws,
        "last_mean_score": mean, "tokens": h["tokens"] + tokens,
        "dead_tokens": h["dead_tokens"] + (0 if taught else tokens),
        "sampling_seconds": h["sampling_seconds"] + seconds,
        "dead_seconds": h["dead_seconds"] + (0 if taught else seconds),
    }
