"""The reads of the Prompts tab: each prompt's history (one row a prompt), one prompt's draws, and each round's
cost of dead groups. A mixin of `TableReadModels` (projections/store.py), which gives it `tables`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from uuid import UUID

from domain.runs.prompt_verdicts import DeadCost
from projections.rows import frozen_from, read_row
from projections.tables import Tables


@dataclass(frozen=True)
class PromptHistoryRow:
    """A training prompt across the rounds that drew it: `prompt_index` in the run's training prompts."""

    prompt_index: int
    verdict: str
    draws: int
    passed_draws: int
    taught_draws: int
    first_round: int
    last_round: int
    score_sum: float
    pass_share_sum: float
    last_mean_score: float
    tokens: int
    dead_tokens: int
    sampling_seconds: float
    dead_seconds: float

    @property
    def mean_score(self) -> float:
        """The mean of its draws' mean scores (each draw has as many answers)."""
        return self.score_sum / self.draws

    @property
    def pass_share(self) -> float:
        return self.pass_share_sum / self.draws

    @property
    def skipped_draws(self) -> int:
        return self.draws - self.taught_draws


@dataclass(frozen=True)
class PromptDrawRow:
    """One round's group of answers to a prompt: at `position` in the round's rollout file."""

    round_number: int
    position: int
    mean_score: float
    pass_share: float
    taught: bool
    tokens: int
    sampling_seconds: float


@dataclass(frozen=True)
class PromptCostRow:
    round_number: int
    cost: DeadCost


COST_COLUMNS = ("round_number", "prompts", "dead_groups", "too_easy", "too_hard", "sampling_seconds", "dead_seconds",
                "tokens", "dead_tokens")  # a round's number, then DeadCost's fields in their order
HISTORY_COLUMNS = tuple(f.name for f in fields(PromptHistoryRow))  # a long run's first viewer reads 4,000


class PromptReads:
    tables: Tables  # provided by TableReadModels

    def prompt_histories(self, org_id: UUID, run_id: UUID, after_round: int | None = None) -> list[PromptHistoryRow]:
        """Every prompt the run drew, by its index; only those drawn after `after_round` where given."""
        after = ("last_round", after_round) if after_round is not None else None
        rows = self.tables.select("prompt_histories", {"run_id": str(run_id), "org_id": str(org_id)},
                                  order=[("prompt_index", False)], after=after, columns=HISTORY_COLUMNS)
        return [frozen_from(PromptHistoryRow, r) for r in rows]  # the columns are its fields, as they are

    def prompt_draws(
        self, org_id: UUID, run_id: UUID, prompt_index: int | None = None
    ) -> dict[int, list[PromptDrawRow]]:
        """Each prompt's draws in round order (of one prompt, or of all), by prompt index."""
        where: dict[str, object] = {"run_id": str(run_id), "org_id": str(org_id)}
        if prompt_index is not None:
            where["prompt_index"] = prompt_index
        draws: dict[int, list[PromptDrawRow]] = {}
        for r in self.tables.select("prompt_rounds", where, order=[("prompt_index", False), ("round_number", False)]):
            draws.setdefault(r["prompt_index"], []).append(read_row(PromptDrawRow, r))
        return draws

    def prompt_costs(self, org_id: UUID, run_id: UUID, after_round: int | None = None) -> list[PromptCostRow]:
        """Each trained round's sampling cost and the part of it that went to groups that taught nothing, oldest
        first; only the rounds after `after_round` where given."""
        after = ("round_number", after_round) if after_round is not None else None
        rows = self.tables.select("prompt_costs", {"run_id": str(run_id), "org_id": str(org_id)},
                                  order=[("round_number", False)], after=after, columns=COST_COLUMNS)
        # DeadCost made by place, its fields in COST_COLUMNS' order: a long run's first viewer reads 1,000 rounds
        return [PromptCostRow(r["round_number"], DeadCost(*(r[c] for c in COST_COLUMNS[1:]))) for r in rows]
