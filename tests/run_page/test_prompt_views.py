"""The Prompts tab's views carried from state to state (histories drawn again or for the first time, new rounds'
costs) hold what views built from all the rows at once hold: the histories, the counts, the total cost, and every
sort of the list, ties and all."""

from __future__ import annotations

import random

from app.runs.prompt_views import _SORT_KEYS, PromptViews
from domain.runs.prompt_verdicts import DeadCost
from projections.prompt_reads import PromptCostRow, PromptHistoryRow

VERDICTS = ("learned", "flipping", "too easy", "too hard", "taught")


def history(index: int, last_round: int, rng: random.Random) -> PromptHistoryRow:
    draws = rng.randint(1, 4)  # few draws, so that many prompts tie on a sort's first key
    return PromptHistoryRow(
        prompt_index=index, verdict=rng.choice(VERDICTS), draws=draws, passed_draws=rng.randint(0, draws),
        taught_draws=rng.randint(0, draws), first_round=1, last_round=last_round,
        score_sum=rng.choice((0.0, 0.5, 1.0)) * draws, pass_share_sum=0.5 * draws, last_mean_score=0.5,
        tokens=100, dead_tokens=10, sampling_seconds=1.0, dead_seconds=0.1)


def cost(round_number: int, rng: random.Random) -> PromptCostRow:
    return PromptCostRow(round_number, DeadCost(groups=8, dead_groups=rng.randint(0, 8), seconds=rng.random(),
                                                tokens=rng.randint(1, 99)))


def test_views_carried_state_to_state_hold_what_views_built_whole_hold() -> None:
    rng = random.Random(3)
    by_index: dict[int, PromptHistoryRow] = {}
    costs: list[PromptCostRow] = []
    carried: PromptViews | None = None
    for round_number in range(1, 30):
        drawn = rng.sample(range(120), 12)  # drawn again or for the first time
        changed = sorted((history(index, round_number, rng) for index in drawn), key=lambda h: h.prompt_index)
        arrived = [cost(round_number, rng)]
        by_index.update((h.prompt_index, h) for h in changed)
        costs += arrived
        whole = PromptViews.of([by_index[i] for i in sorted(by_index)], list(costs))
        if carried is None:
            carried = whole
            for sort in _SORT_KEYS:  # the first state's readers asked for every sort: each is carried from now on
                carried.sorted_by(sort)
            continue
        earlier, earlier_order = carried, list(carried.sorted_by("mean"))
        carried = carried.taking(changed, arrived)
        assert carried.histories == whole.histories and carried.costs == whole.costs
        assert carried.histories_read_to == whole.histories_read_to == round_number
        assert +carried.verdict_counts == +whole.verdict_counts and carried.total_cost == whole.total_cost
        for sort in _SORT_KEYS:
            assert carried.sorted_by(sort) == whole.sorted_by(sort), sort
        assert earlier.sorted_by("mean") == earlier_order  # viewers of the earlier state still see it whole


def test_a_state_with_nothing_new_is_the_earlier_one() -> None:
    views = PromptViews.of([], [])
    assert views.taking([], []) is views and views.sorted_by("drawn") == [] and views.histories_read_to == -1
