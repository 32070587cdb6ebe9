"""The reads of the Prompts tab: each prompt's history (one row a prompt), one prompt's draws, and each round's
cost of dead groups. A mixin of `TableReadModels` (projections/store.py), which gives it `tables`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from uuid import UUID

from domain.runs.prompt_verdicts import DeadCost
from projections.rows import frozen_from, read_row
from projections.tables import Order, Tables


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
    mean_score: float  # the mean of its draws' mean scores, score_sum / draws (each draw has as many answers)

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
HISTORY_COLUMNS = tuple(f.name for f in fields(PromptHistoryRow))


class PromptReads:
    tables: Tables  # provided by TableReadModels

    def prompt_histories(self, org_id: UUID, run_id: UUID) -> list[PromptHistoryRow]:
        """Every prompt the run drew, by its index."""
        return self.prompt_page(org_id, run_id, order=[("prompt_index", False)])

    def prompt_page(self, org_id: UUID, run_id: UUID, *, order: Order, verdict: str | None = None,
                    offset: int = 0, limit: int | None = None) -> list[PromptHistoryRow]:
        """The prompts the run drew (of one `verdict` where given) in `order`, at most `limit` from the
        `offset`-th: the database sorts and pages them, so a page of a long run's list reads 50 rows, not 4,000."""
        where: dict[str, object] = {"run_id": str(run_id), "org_id": str(org_id)}
        if verdict is not None:
            where["verdict"] = verdict
        rows = self.tables.select("prompt_histories", where, order=order, limit=limit, offset=offset,
                                  columns=HISTORY_COLUMNS)
        return [frozen_from(PromptHistoryRow, r) for r in rows]  # the columns are its fields, as they are

    def prompt_verdicts(self, org_id: UUID, run_id: UUID) -> dict[str, int]:
        """How many of the prompts the run drew have each verdict (those no prompt has are absent)."""
        return self.tables.count_by("prompt_histories", {"run_id": str(run_id), "org_id": str(org_id)}, "verdict")

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

    def prompt_costs(self, org_id: UUID, run_id: UUID, newest: int | None = None) -> list[PromptCostRow]:
        """Each trained round's sampling cost and the part of it that went to groups that taught nothing, oldest
        first; only the `newest` rounds' where given."""
        rows = self.tables.select("prompt_costs", {"run_id": str(run_id), "org_id": str(org_id)},
                                  order=[("round_number", newest is not None)], limit=newest, columns=COST_COLUMNS)
        if newest is not None:
            rows.reverse()
        # DeadCost made by place, its fields in COST_COLUMNS' order
        return [PromptCostRow(r["round_number"], DeadCost(*(r[c] for c in COST_COLUMNS[1:]))) for r in rows]

    def prompt_cost_rounds(self, org_id: UUID, run_id: UUID) -> int:
        """How many rounds have a cost (every trained round that drew prompts)."""
        return self.tables.count("prompt_costs", {"run_id": str(run_id), "org_id": str(org_id)})

    def prompt_cost_total(self, org_id: UUID, run_id: UUID) -> DeadCost:
        """The run's sampling cost over all its rounds, and the part that went to groups that taught nothing: summed
        by the database (PostgreSQL sums a BIGINT as a NUMERIC, so each figure is made its field's type again)."""
        sums = self.tables.sums("prompt_costs", {"run_id": str(run_id), "org_id": str(org_id)}, COST_COLUMNS[1:])
        return DeadCost(*(kind(sums[column] or 0) for column, kind in zip(COST_COLUMNS[1:], _COST_KINDS,
                                                                           strict=True)))


_COST_KINDS = tuple(type(f.default) for f in fields(DeadCost))  # int or float, COST_COLUMNS[1:]'s, in their order
