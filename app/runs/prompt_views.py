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
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import itemgetter
from typing import Any
from uuid import UUID

from app.runs.round_views import KeptByRunState
from domain.runs.prompt_verdicts import DeadCost
from projections.prompt_reads import PromptCostRow, PromptHistoryRow


@dataclass
class PromptViews:
    """A state's histories and costs with what the tab draws from them, each carried from the run's previous state
    and changed by the rows read since: the counts, the total cost, and the histories in each order asked for so
    far (by prompt number always)."""

    orders: dict[str, _Sorted]  # by the sort's name (app/runs/prompts.py names them); "index": by prompt number
    costs: list[PromptCostRow]  # oldest round first
    histories_read_to: int  # the highest round whose draws these histories hold (-1 before any)
    verdict_counts: Counter[str]
    total_cost: DeadCost
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, histories: list[PromptHistoryRow], costs: list[PromptCostRow]) -> PromptViews:
        """From all the histories and costs (oldest round first)."""
        return cls({"index": _Sorted.of(histories, _SORT_KEYS["index"])}, costs,
                   max((h.last_round for h in histories), default=-1), Counter(h.verdict for h in histories),
                   total_cost(costs))

    @property
    def histories(self) -> list[PromptHistoryRow]:
        """By prompt number."""
        return self.orders["index"].rows

    @property
    def costs_read_to(self) -> int:
        return self.costs[-1].round_number if self.costs else -1

    def sorted_by(self, sort: str) -> list[PromptHistoryRow]:
        """The histories in a sort of the list, sorted once per run and kept in order as rows change (the tab's
        readers mostly keep one sort)."""
        with self._lock:
            if sort not in self.orders:
                self.orders[sort] = _Sorted.of(self.histories, _SORT_KEYS[sort])
            return self.orders[sort].rows

    def taking(self, changed: list[PromptHistoryRow], costs: list[PromptCostRow]) -> PromptViews:
        """These views with the histories `changed` since (new or drawn again) and the `costs` of the rounds after
        these, leaving these as they are: viewers of the earlier state may still be drawing from them."""
        if not changed and not costs:
            return self
        by_number = self.orders["index"]
        replaced = [old for h in changed if (old := by_number.find(h.prompt_index)) is not None]
        counts = Counter(self.verdict_counts)
        counts.subtract(h.verdict for h in replaced)
        counts.update(h.verdict for h in changed)
        with self._lock:
            orders = dict(self.orders)
        return PromptViews(
            {sort: order.changed(_SORT_KEYS[sort], replaced, changed) for sort, order in orders.items()},
            self.costs + costs,
            max([self.histories_read_to, *(h.last_round for h in changed)]),
            +counts,
            total_cost(costs, self.total_cost),
        )


@dataclass(frozen=True)
class _Sorted:
    """Histories in an order and each one's key in it, side by side: a changed history moves by bisection. Every
    key holds the prompt's number, so no two histories have one key."""

    keys: list[Any]
    rows: list[PromptHistoryRow]

    @classmethod
    def of(cls, histories: list[PromptHistoryRow], key: Callable[[PromptHistoryRow], Any]) -> _Sorted:
        keyed = sorted(((key(h), h) for h in histories), key=itemgetter(0))
        return cls([k for k, _ in keyed], [h for _, h in keyed])

    def find(self, key: Any) -> PromptHistoryRow | None:
        place = bisect_left(self.keys, key)
        return self.rows[place] if place < len(self.keys) and self.keys[place] == key else None

    def changed(self, key: Callable[[PromptHistoryRow], Any], removed: list[PromptHistoryRow],
                added: list[PromptHistoryRow]) -> _Sorted:
        """This order without the `removed` histories and with the `added` ones, in new lists. An added history
        whose key a removed one had takes its place; the others move (by prompt number, every history drawn again
        keeps its place: once a run has drawn all its prompts, each round's are all such)."""
        keys, rows = list(self.keys), list(self.rows)
        added_keys = [key(history) for history in added]
        staying = set(added_keys)
        for history in removed:
            if (old := key(history)) not in staying:
                place = bisect_left(keys, old)
                del keys[place], rows[place]
        for history, new in zip(added, added_keys, strict=True):
            place = bisect_left(keys, new)
            if place < len(keys) and keys[place] == new:  # a removed one's place: every key is one prompt's
                rows[place] = history
            else:
                keys.insert(place, new)
                rows.insert(place, history)
        return _Sorted(keys, rows)


# Each sort of the list (app/runs/prompts.py names them), ties by prompt number
_SORT_KEYS: dict[str, Callable[[PromptHistoryRow], Any]] = {
    "drawn": lambda p: (-p.draws, p.prompt_index),
    "mean": lambda p: (p.mean_score, p.prompt_index),
    "mean-desc": lambda p: (-p.mean_score, p.prompt_index),
    "last": lambda p: (-p.last_round, p.prompt_index),
    "index": lambda p: p.prompt_index,
}


def total_cost(costs: list[PromptCostRow], start: DeadCost | None = None) -> DeadCost:
    """What sampling spent over the rounds, and on groups that taught nothing (from `start`'s figures on): each
    figure summed in one pass, in the rounds' order (a long run's first viewer sums 1,000 rounds)."""
    begin = start or DeadCost()
    return DeadCost(**{name: sum((getattr(row.cost, name) for row in costs), getattr(begin, name))
                       for name in _COST_FIGURES})


_COST_FIGURES = tuple(f.name for f in fields(DeadCost))


_prompt_views: KeptByRunState[PromptViews] = KeptByRunState()


def prompt_views(read_models: Any, org_id: UUID, run_id: UUID, stamp: str) -> PromptViews:
    """The run's prompt histories and costs at the state `stamp`."""
    return _prompt_views.get(read_models, org_id, run_id, stamp,
                             lambda before: prompt_views_since(read_models, org_id, run_id, before))


def prompt_views_since(read_models: Any, org_id: UUID, run_id: UUID, before: PromptViews | None) -> PromptViews:
    """All of them read, or `before`'s with the rows changed since it: each table by the highest round it read, so
    a round committed between the two reads is read whole by the next state."""
    if before is None:
        return PromptViews.of(read_models.prompt_histories(org_id, run_id), read_models.prompt_costs(org_id, run_id))
    changed = read_models.prompt_histories(org_id, run_id, after_round=before.histories_read_to)
    return before.taking(changed, read_models.prompt_costs(org_id, run_id, after_round=before.costs_read_to))
