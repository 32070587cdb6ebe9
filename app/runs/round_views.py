"""A live run's rounds and what the page draws from them, worked out once per state of the run.

Every viewer of a live run polls its parts every 2 s; when a round arrives each of them asks for every part again,
and each part used to read all of the run's rounds and build its charts anew: fifty viewers of a 1,000-round run
read the same 1,000 rows four hundred times a round. What is drawn from the rounds depends only on the run's
state (its `stamp`, app/runs/view.py), not on who looks, so it is kept here for that state: the first request
after a round reads and builds, the others reuse it. Per process, a bounded number of run states.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from uuid import UUID

from app.runs.metrics import Tile, Trend, reward_chart, small_charts, tiles, trends
from projections.rows import RoundRow

KEPT = 128  # run states kept: a few per live run being watched


@dataclass
class RoundViews:
    """Each drawing is built on first use; two requests building one at once both get the same answer."""

    rounds: list[RoundRow]

    @cached_property
    def chart(self) -> str:
        return json.dumps(reward_chart(self.rounds))

    @cached_property
    def small_charts(self) -> list[str]:
        return [json.dumps(chart) for chart in small_charts(self.rounds)]

    @cached_property
    def trends(self) -> list[Trend]:
        return trends(self.rounds)

    @cached_property
    def tiles(self) -> list[Tile]:
        return tiles(self.rounds)


_kept: OrderedDict[tuple[Any, ...], RoundViews] = OrderedDict()
_lock = threading.Lock()


def round_views(read_models: Any, org_id: UUID, run_id: UUID, stamp: str) -> RoundViews:
    """The run's rounds (newest first, as the read model gives them) and their drawings, at the state `stamp`."""
    key = (id(read_models), org_id, run_id, stamp)
    with _lock:
        views = _kept.get(key)
        if views is not None:
            _kept.move_to_end(key)
            return views
    views = RoundViews(read_models.rounds(org_id, run_id))  # read outside the lock: viewers of other runs go on
    with _lock:
        _kept[key] = views
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return views
