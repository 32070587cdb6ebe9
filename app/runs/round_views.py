"""What a live run's page draws from its rounds, each drawing worked out once per state of the run, from only what it
shows, and only what changed.

Every viewer of a live run polls its parts every 2 s; when a round arrives each of them asks for every part again.
What is drawn from the rounds depends only on the run's state (its `stamp`, app/runs/view.py), not on who looks, so
each drawing is kept for that state: the first request after a round reads and builds, the others reuse it. Per
process, a bounded number of run states.

A part reads only what it shows: the Reward chart the rounds' rewards (RewardPoints), the RL metrics the figures of
their charts, tiles and trends (MetricPoints), the Rounds table and the Training logs the newest rows (NewestRounds),
the status line's Time left the rounds' seconds (TrainedTime). A 1,000-round run's first viewer of a part so reads a
few columns or fifty rows, not the 1,000 rows of every figure (15 ms). A round's row never changes once scored, and a
run's rounds are numbered from 0 without a gap, so the first request of a new state reads only the rounds after
those its drawing of the run's previous state holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar
from uuid import UUID

from app.runs.metrics import Tile, Trend
from app.runs.round_points import METRIC_FIGURES, REWARD_FIGURES, MetricPoints, RewardPoints
from app.shell.kept import KeptByState
from projections.rows import RoundRow

KEPT = 128  # run states kept: a few per live run being watched
NEWEST_KEPT = 50  # the newest rounds' rows kept: the most the Rounds table or the Training logs show of a live run
T = TypeVar("T")


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


@dataclass(frozen=True)
class NewestRounds:
    """The run's newest rounds' rows (newest first, at most NEWEST_KEPT) and how many rounds it has."""

    rows: list[RoundRow]
    total: int


@dataclass(frozen=True)
class TrainedTime:
    """The rounds a run trained (all but round 0) and the seconds they took, up to its round `newest`."""

    newest: int
    rounds: int
    seconds: float


_newest_rounds: KeptByRunState[NewestRounds] = KeptByRunState()
_reward_points: KeptByRunState[RewardPoints] = KeptByRunState()
_metric_points: KeptByRunState[MetricPoints] = KeptByRunState()
_trained_times: KeptByRunState[TrainedTime] = KeptByRunState()


class RoundViews:
    """What a run's parts draw from its rounds at the state `stamp`, each drawing read and built (or taken from
    those kept) when a part first asks for it: a part that shows no chart reads no figure."""

    def __init__(self, read_models: Any, org_id: UUID, run_id: UUID, stamp: str, show_all: bool = False) -> None:
        self._read_models, self._org_id, self._run_id, self._stamp = read_models, org_id, run_id, stamp
        self._show_all = show_all  # every round's row, not the newest (Show all): read for the request, not kept

    def _kept(self, kept: KeptByRunState[T], since: Callable[[Any, UUID, UUID, T | None], T]) -> T:
        """This state's drawing, made from the run's latest one (`since` reads what arrived after it)."""
        read_models, org_id, run_id = self._read_models, self._org_id, self._run_id
        return kept.get(read_models, org_id, run_id, self._stamp,
                        lambda before: since(read_models, org_id, run_id, before))

    @cached_property
    def newest(self) -> NewestRounds:
        if self._show_all:
            every = self._read_models.rounds(self._org_id, self._run_id)
            return NewestRounds(every, len(every))
        return self._kept(_newest_rounds, newest_since)

    @property
    def rounds(self) -> list[RoundRow]:
        """The newest rounds' rows, newest first (every round's with Show all)."""
        return self.newest.rows

    @property
    def rounds_total(self) -> int:
        return self.newest.total

    @cached_property
    def reward_points(self) -> RewardPoints:
        return self._kept(_reward_points, reward_points_since)

    @cached_property
    def metric_points(self) -> MetricPoints:
        return self._kept(_metric_points, metric_points_since)

    @cached_property
    def chart(self) -> str:
        return self.reward_points.reward_chart()

    @cached_property
    def small_charts(self) -> list[str]:
        return self.metric_points.small_charts()

    @cached_property
    def trends(self) -> list[Trend]:
        return self.metric_points.trends()

    @cached_property
    def tiles(self) -> list[Tile]:
        return self.metric_points.tiles()

    def trained_time(self) -> tuple[int, float]:
        """The rounds trained so far and their seconds (Time left), from the rounds' seconds alone."""
        time = self._kept(_trained_times, trained_time_since)
        return time.rounds, time.seconds


def newest_since(read_models: Any, org_id: UUID, run_id: UUID, before: NewestRounds | None) -> NewestRounds:
    """The newest rounds: those after `before`'s newest added to them, or read again where `before` has none or they
    do not join up (a run's rounds are 0, 1, 2, ... without a gap)."""
    if before is not None and before.rows:
        arrived = read_models.rounds(org_id, run_id, after=before.rows[0].round_number, newest=NEWEST_KEPT)
        if _follows_on(arrived[-1].round_number if arrived else None, before.rows[0].round_number + 1):
            rows = (arrived + before.rows)[:NEWEST_KEPT]
            return NewestRounds(rows, before.total + len(arrived))
    return NewestRounds(read_models.rounds(org_id, run_id, newest=NEWEST_KEPT), read_models.round_count(org_id, run_id))


def reward_points_since(read_models: Any, org_id: UUID, run_id: UUID, before: RewardPoints | None) -> RewardPoints:
    """The Reward chart's points: `before`'s and those of the rounds after its last, or all of them again where the
    rounds read do not follow on from `before`'s."""
    if before is not None:
        arrived = read_models.round_figures(org_id, run_id, REWARD_FIGURES, after=before.rounds - 1)
        if _follows_on(next(iter(arrived["round_number"]), None), before.rounds):
            return before.taking(arrived)
    return RewardPoints().taking(read_models.round_figures(org_id, run_id, REWARD_FIGURES))


def metric_points_since(read_models: Any, org_id: UUID, run_id: UUID, before: MetricPoints | None) -> MetricPoints:
    """The RL metrics' points: `before`'s and those of the trained rounds after its last, or all of them again
    where the rounds read do not follow on from `before`'s (trained rounds are 1, 2, 3, ...)."""
    if before is not None:
        newest = before.trained_rounds  # its newest round: trained rounds are 1, 2, 3, ...
        arrived = read_models.round_figures(org_id, run_id, METRIC_FIGURES, after=newest)
        if _follows_on(next(iter(arrived["round_number"]), None), newest + 1):
            return before.taking(arrived)
    return MetricPoints().taking(read_models.round_figures(org_id, run_id, METRIC_FIGURES, after=0))  # trained ones


def _follows_on(oldest_arrived: int | None, next_round: int) -> bool:
    """Whether the rounds read since a drawing follow on from the rounds it holds (`next_round` the one after its
    newest), or none arrived: else the drawing is made again from all the rounds."""
    return oldest_arrived is None or oldest_arrived == next_round


def trained_time_since(read_models: Any, org_id: UUID, run_id: UUID, before: TrainedTime | None) -> TrainedTime:
    """The rounds trained and their seconds: `before`'s and those of the rounds after its newest."""
    earlier = before or TrainedTime(-1, 0, 0.0)
    arrived = read_models.round_seconds(org_id, run_id, earlier.newest if before is not None else None)
    count, seconds = _trained(arrived)
    return TrainedTime(max([earlier.newest, *(number for number, _ in arrived)]), earlier.rounds + count,
                       earlier.seconds + seconds)


def _trained(numbered_seconds: Iterable[tuple[int, float]]) -> tuple[int, float]:
    """How many of the rounds (each its number and seconds) trained, all but round 0, and the seconds those took."""
    trained = [seconds for number, seconds in numbered_seconds if number >= 1]
    return len(trained), sum(trained)
