"""A run's prompt histories and round costs (the Prompts tab), read once per state of the run, and only what changed.

A 1,000-round run of 64 prompts a round holds about 4,000 prompt histories: reading and building them all for every
new state of the run took ~60 ms. A run's rounds are scored in order, each once (domain/runs/run_progress.py), and a
history row changes only when a round draws its prompt, which sets its `last_round` to that round; so the rows
changed since a state are those whose `last_round` is above the highest that state read, and the cost rows those of
its later rounds. The first request of a new state reads those and takes the rest from the run's previous state
(app/runs/round_views.py keeps states the same way).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from uuid import UUID

from app.runs.round_views import KeptByRunState
from domain.runs.prompt_verdicts import DeadCost
from projections.prompt_reads import PromptCostRow, PromptHistoryRow


@dataclass
class PromptViews:
    histories: list[PromptHistoryRow]  # by prompt index
    costs: list[PromptCostRow]  # oldest round first
    _sorted: dict[str, list[PromptHistoryRow]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def histories_read_to(self) -> int:
        """The highest round whose draws these histories hold (-1 before any)."""
        return max((h.last_round for h in self.histories), default=-1)

    @property
    def costs_read_to(self) -> int:
        return self.costs[-1].round_number if self.costs else -1

    @cached_property
    def verdict_counts(self) -> Counter[str]:
        return Counter(h.verdict for h in self.histories)

    @cached_property
    def total_cost(self) -> DeadCost:
        return total_cost(self.costs)

    def sorted_by(self, sort: str) -> list[PromptHistoryRow]:
        """The histories in a sort of the list, sorted once per state (the tab's readers mostly keep one sort)."""
        with self._lock:
            if sort not in self._sorted:
                self._sorted[sort] = sorted_prompts(self.histories, sort)
            return self._sorted[sort]


# Each sort of the list (app/runs/prompts.py names them), ties by prompt number
_SORT_KEYS: dict[str, Callable[[PromptHistoryRow], Any]] = {
    "drawn": lambda p: (-p.draws, p.prompt_index),
    "mean": lambda p: (p.mean_score, p.prompt_index),
    "mean-desc": lambda p: (-p.mean_score, p.prompt_index),
    "last": lambda p: (-p.last_round, p.prompt_index),
    "index": lambda p: p.prompt_index,
}


def sorted_prompts(prompts: list[PromptHistoryRow], sort: str) -> list[PromptHistoryRow]:
    return sorted(prompts, key=_SORT_KEYS[sort])


def total_cost(costs: list[PromptCostRow]) -> DeadCost:
    """What sampling spent over the rounds, and on groups that taught nothing."""
    total = DeadCost()
    for row in costs:
        total = total + row.cost
    return total


_prompt_views: KeptByRunState[PromptViews] = KeptByRunState()


def prompt_views(read_models: Any, org_id: UUID, run_id: UUID, stamp: str) -> PromptViews:
    """The run's prompt histories and costs at the state `stamp`."""
    return _prompt_views.get(read_models, org_id, run_id, stamp,
                             lambda before: prompt_views_since(read_models, org_id, run_id, before))


def prompt_views_since(read_models: Any, org_id: UUID, run_id: UUID, before: PromptViews | None) -> PromptViews:
    """All of them read, or `before`'s with the rows changed since it: each table by the highest round it read, so
    a round committed between the two reads is read whole by the next state."""
    if before is None:
        return PromptViews(read_models.prompt_histories(org_id, run_id), read_models.prompt_costs(org_id, run_id))
    changed = read_models.prompt_histories(org_id, run_id, after_round=before.histories_read_to)
    costs = read_models.prompt_costs(org_id, run_id, after_round=before.costs_read_to)
    if not changed:
        histories = before.histories
    else:
        by_index = {h.prompt_index: h for h in before.histories}
        by_index.update((h.prompt_index, h) for h in changed)
        histories = [by_index[index] for index in sorted(by_index)]
    return PromptViews(histories, before.costs + costs if costs else before.costs)
