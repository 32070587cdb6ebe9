"""A live run's rounds and what the page draws from them, worked out once per state of the run.

Every viewer of a live run polls its parts every 2 s; when a round arrives each of them asks for every part again,
and each part used to read all of the run's rounds and build its charts anew: fifty viewers of a 1,000-round run
read the same 1,000 rows four hundred times a round. What is drawn from the rounds depends only on the run's
state (its `stamp`, app/runs/view.py), not on who looks, so it is kept here for that state: the first request
after a round reads and builds, the others reuse it. Per process, a bounded number of run states.

A round's row never changes once scored, and a run's rounds are numbered from 0 without a gap, so the first request
of a new state reads only the rounds after those of the run's previous state, not all of them again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar
from uuid import UUID

from app.runs.metrics import Tile, Trend
from app.runs.round_points import RoundPoints
from app.shell.kept import KeptByState
from projections.rows import RoundRow

KEPT = 128  # run states kept: a few per live run being watched
T = TypeVar("T")


@dataclass
class RoundViews:
    """Each drawing is built on first use; two requests building one at once both get the same answer. The charts'
    points too: a part that shows no chart (the status line) never works them out."""

    rounds: list[RoundRow]  # newest first, as the read model gives them
    trained_rounds: int = 0  # the rounds after round 0, and the seconds they took (Time left)
    trained_seconds: float = 0.0
    # the points of an earlier state, where they were worked out, and the rounds that arrived since (oldest first)
    earlier_points: RoundPoints | None = None
    arrived: list[RoundRow] = field(default_factory=list)

    @classmethod
    def of(cls, rounds: list[RoundRow], before: RoundViews | None = None,
           arrived: Sequence[RoundRow] = ()) -> RoundViews:
        """The views of `rounds` (all of them), or of `before`'s and the rounds `arrived` since (newest first)."""
        if before is None:
            return cls(rounds, *_trained((r.round_number, r.seconds) for r in rounds))
        count, seconds = _trained((r.round_number, r.seconds) for r in arrived)
        oldest_first = arrived[::-1]
        if "points" in before.__dict__:  # worked out: the new state takes the arrived rounds' points to them
            earlier, pending = before.points, oldest_first
        else:
            earlier, pending = before.earlier_points, [*before.arrived, *oldest_first]
        return cls(rounds, before.trained_rounds + count, before.trained_seconds + seconds, earlier,
                   pending if earlier is not None else [])

    @cached_property
    def points(self) -> RoundPoints:
        """Every line's points, oldest first."""
        if self.earlier_points is None:
            return RoundPoints().taking(self.rounds[::-1])
        return self.earlier_points.taking(self.arrived)

    @cached_property
    def chart(self) -> str:
        return self.points.reward_chart()

    @cached_property
    def small_charts(self) -> list[str]:
        return self.points.small_charts()

    @cached_property
    def trends(self) -> list[Trend]:
        return self.points.trends()

    @cached_property
    def tiles(self) -> list[Tile]:
        return self.points.tiles()

    @property
    def trained(self) -> bool:
        return self.trained_rounds > 0

    @property
    def round_zero(self) -> RoundRow | None:
        return self.rounds[-1] if self.rounds and self.rounds[-1].round_number == 0 else None

    def round(self, number: int | None) -> RoundRow | None:
        """Round `number`, found by its place: the rounds are 0, 1, 2, ... without a gap."""
        if number is None:
            return None
        place = len(self.rounds) - 1 - number
        found = self.rounds[place] if 0 <= place < len(self.rounds) else None
        return found if found is not None and found.round_number == number else None


def _trained(numbered_seconds: Iterable[tuple[int, float]]) -> tuple[int, float]:
    """How many of the rounds (each its number and seconds) trained, all but round 0, and the seconds those took."""
    trained = [seconds for number, seconds in numbered_seconds if number >= 1]
    return len(trained), sum(trained)


NO_ROUNDS = RoundViews([])  # a tab that shows no rounds (the timeline)


class KeptByRunState(Generic[T]):
    """A value per state of a run, made by the first request of that state from the run's latest value of any state
    (None at first): what changed since is read, the rest taken from it."""

    def __init__(self, kept: int = KEPT) -> None:
        self._by_state: KeptByState[T] = KeptByState(kept)
        self._latest: KeptByState[T] = KeptByState(kept)  # each run's latest value, whatever its state

    def get(self, read_models: Any, org_id: UUID, run_id: UUID, stamp: str, since: Callable[[T | None], T]) -> T:
        run_key = (id(read_models), org_id, run_id)

        def make() -> tuple[T, bool]:
            value = since(self._latest.peek(run_key))
            self._latest.put(run_key, value)
            return value, True

        return self._by_state.get((*run_key, stamp), make)


_round_views: KeptByRunState[RoundViews] = KeptByRunState()


def round_views(read_models: Any, org_id: UUID, run_id: UUID, stamp: str) -> RoundViews:
    """The run's rounds (newest first, as the read model gives them) and their drawings, at the state `stamp`."""
    return _round_views.get(read_models, org_id, run_id, stamp,
                            lambda before: views_since(read_models, org_id, run_id, before))


@dataclass(frozen=True)
class TrainedTime:
    """The rounds a run trained (all but round 0) and the seconds they took, up to its round `newest`."""

    newest: int
    rounds: int
    seconds: float


_trained_times: KeptByRunState[TrainedTime] = KeptByRunState()


def trained_time(read_models: Any, org_id: UUID, run_id: UUID, stamp: str, views: RoundViews) -> tuple[int, float]:
    """The rounds trained so far and their seconds (Time left): from `views` where the part read the rounds, else
    from the rounds' seconds alone, read once and then only those of the rounds since (the status line draws
    nothing else from the rounds, and a 1,000-round run's rounds take 15 ms to read in full)."""
    if views is not NO_ROUNDS:
        return views.trained_rounds, views.trained_seconds

    def since(before: TrainedTime | None) -> TrainedTime:
        earlier = before or TrainedTime(-1, 0, 0.0)
        arrived = read_models.round_seconds(org_id, run_id, earlier.newest if before is not None else None)
        count, seconds = _trained(arrived)
        return TrainedTime(max([earlier.newest, *(number for number, _ in arrived)]), earlier.rounds + count,
                           earlier.seconds + seconds)

    time = _trained_times.get(read_models, org_id, run_id, stamp, since)
    return time.rounds, time.seconds


def views_since(read_models: Any, org_id: UUID, run_id: UUID, before: RoundViews | None) -> RoundViews:
    """The run's rounds and their points: those after `before`'s added to them, or all read again where `before`
    has none or the rounds do not join up (a run's rounds are 0, 1, 2, ... newest first)."""
    if before is not None and before.rounds:
        arrived = read_models.rounds(org_id, run_id, after=before.rounds[0].round_number)
        rounds = arrived + before.rounds
        if rounds[0].round_number == len(rounds) - 1 and rounds[-1].round_number == 0:
            return RoundViews.of(rounds, before, arrived)
    return RoundViews.of(read_models.rounds(org_id, run_id))
