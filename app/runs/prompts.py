"""Prompts (a tab of the run page, and `GET /api/runs/{id}/prompts`): every training prompt the run drew, with its
history across rounds and its verdict (domain/runs/prompt_verdicts.py), and what sampling spent on groups that taught
nothing.

The list reads one row per prompt (projections/prompts.py), and only the rows it shows: the database counts the
prompts by verdict, sorts them and gives one page, and sums the cost, so a page costs about the same at round 10 and
at round 1,000 (4,000 prompts drawn). A prompt is named by its number in the run's training prompts: its text and
answers are in the rollout files (your data, never in the events), read when a prompt is opened, from the files of
the rounds that drew it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from app.runs.samples import PromptSample, SamplesUnreadable, read_prompt
from domain.rewards.passing import PASSING_SCORE
from domain.runs.prompt_verdicts import VERDICTS, DeadCost, dead_cost_advice
from projections.prompt_reads import PromptDrawRow, PromptHistoryRow

PROMPTS_SHOWN = 50  # a page of the list
COST_ROUNDS_SHOWN = 10  # the newest rounds of the cost table until Show all
ANSWERS_SHOWN = 10  # an opened prompt's newest draws whose answers are read, until Show all
API_PAGE = 100  # prompts in a page of GET /api/runs/{id}/prompts unless `limit` says otherwise
API_PAGE_MOST = 500
SORTS = {
    "drawn": "Most drawn",
    "mean": "Lowest mean score",
    "mean-desc": "Highest mean score",
    "last": "Drawn most recently",
    "index": "Prompt number",
}
# Each sort of the list as the database orders it: ties by prompt number, so every prompt has one place
SORT_ORDERS: dict[str, list[tuple[str, bool]]] = {
    "drawn": [("draws", True), ("prompt_index", False)],
    "mean": [("mean_score", False), ("prompt_index", False)],
    "mean-desc": [("mean_score", True), ("prompt_index", False)],
    "last": [("last_round", True), ("prompt_index", False)],
    "index": [("prompt_index", False)],
}
PASSING_WORDS = (f"An answer passes with a score of at least {PASSING_SCORE:g}; a draw passes when at least half its "
                 "answers pass. A draw taught when its answers did not all score alike; one whose answers all scored "
                 "alike was skipped.")
VERDICT_WORDS = {
    "learned": "failed when first drawn, passes now",
    "still failing": "never passed",
    "always passing": "passed every time: nothing left to learn",
    "flipping": "passes and fails by turns",
    "never taught": "skipped every time it was drawn",
}


@dataclass(frozen=True)
class PromptQuery:
    """The list as its reader asked for it: a verdict (or all), a sort, a page."""

    verdict: str = "all"
    sort: str = "drawn"
    page: int = 1

    @classmethod
    def of(cls, params: Mapping[str, str]) -> PromptQuery:
        """From the query string; what it does not know falls back to the default.

        >>> PromptQuery.of({"verdict": "learned", "sort": "nope", "page": "x"})
        PromptQuery(verdict='learned', sort='drawn', page=1)
        """
        verdict = params.get("verdict", "all")
        sort = params.get("sort", "drawn")
        page = params.get("page", "1")
        return cls(
            verdict=verdict if verdict in VERDICTS else "all",
            sort=sort if sort in SORTS else "drawn",
            page=max(int(page), 1) if page.isdigit() else 1,
        )

    def params(self, **changes: Any) -> str:
        """This query as a query string, with `changes` (a new filter or sort starts again at page 1)."""
        query = replace(self, **changes)
        values = {"verdict": query.verdict, "sort": query.sort, "page": query.page}
        return urlencode({k: v for k, v in values.items() if v != getattr(PromptQuery, k)})


def chosen_page(read_models: Any, org_id: Any, run_id: Any, query: PromptQuery, offset: int,
                limit: int) -> list[PromptHistoryRow]:
    """The query's prompts (of its verdict, in its sort), at most `limit` from the `offset`-th."""
    verdict = None if query.verdict == "all" else query.verdict
    return read_models.prompt_page(org_id, run_id, order=SORT_ORDERS[query.sort], verdict=verdict, offset=offset,
                                   limit=limit)


def matched(counts: Mapping[str, int], query: PromptQuery) -> int:
    """How many prompts the query's verdict has (all of them for "all"), from the counts by verdict."""
    return sum(counts.values()) if query.verdict == "all" else counts.get(query.verdict, 0)


def prompts_context(read_models: Any, identity: Any, run: Any, query: PromptQuery, show_all: bool) -> dict[str, Any]:
    """The Prompts tab: the counts by verdict, the page of prompts, and the cost of dead prompts."""
    org = identity.organization_id
    counts = read_models.prompt_verdicts(org, run.id)
    chosen = matched(counts, query)
    pages = max((chosen + PROMPTS_SHOWN - 1) // PROMPTS_SHOWN, 1)
    page = min(query.page, pages)
    total = read_models.prompt_cost_total(org, run.id)
    newest_costs = read_models.prompt_costs(org, run.id, None if show_all else COST_ROUNDS_SHOWN)
    return {
        "prompt_query": replace(query, page=page),
        "prompts_total": sum(counts.values()),
        "prompts_matched": chosen,
        "prompts_page": chosen_page(read_models, org, run.id, query, (page - 1) * PROMPTS_SHOWN, PROMPTS_SHOWN),
        "prompt_pages": pages,
        "prompts_shown": PROMPTS_SHOWN,
        "verdict_counts": [(v, counts.get(v, 0)) for v in VERDICTS],
        "verdict_words": VERDICT_WORDS,
        "sorts": SORTS,
        "passing_words": PASSING_WORDS,
        "dead_cost": total,
        "dead_cost_advice": dead_cost_advice(total),
        "cost_rounds": newest_costs[::-1],
        "cost_rounds_total": read_models.prompt_cost_rounds(org, run.id),
    }


@dataclass(frozen=True)
class DrawAnswers:
    """A draw of an opened prompt, with its answers from the round's rollout file (or why they could not be read)."""

    draw: PromptDrawRow
    sample: PromptSample | None
    error: str | None


def opened_prompt_context(read_models: Any, identity: Any, run: Any, storage: Any, prompt_index: int,
                          show_all: bool) -> dict[str, Any] | None:
    """An opened prompt: every draw's numbers, and the answers of its newest draws (all of them with Show all),
    newest first; None when the run never drew it."""
    org = identity.organization_id
    draws = read_models.prompt_draws(org, run.id, prompt_index).get(prompt_index)
    if not draws:
        return None
    files = read_models.samples(org, run.id)
    newest = list(reversed(draws))
    read = newest if show_all else newest[:ANSWERS_SHOWN]
    answers = []
    for draw in read:
        try:
            answers.append(DrawAnswers(draw, read_prompt(storage, files, draw.round_number, draw.position), None))
        except SamplesUnreadable as problem:
            answers.append(DrawAnswers(draw, None, str(problem)))
    return {
        "prompt_index": prompt_index,
        "draws": newest,
        "draw_answers": answers,
        "answers_hidden": len(newest) - len(read),
        "prompt_text": next((a.sample for a in answers if a.sample is not None), None),
    }


@dataclass(frozen=True)
class PromptsPage:
    """A page of the API's prompts: `limit` prompts from the `offset`-th, in the list's order."""

    offset: int = 0
    limit: int = API_PAGE

    @classmethod
    def of(cls, params: Mapping[str, str]) -> PromptsPage:
        """From the query string; a limit is held to 1..API_PAGE_MOST, and what is not a number is the default.

        >>> PromptsPage.of({"offset": "100", "limit": "5000"}), PromptsPage.of({"offset": "-3", "limit": "0"})
        (PromptsPage(offset=100, limit=500), PromptsPage(offset=0, limit=1))
        """
        offset, limit = params.get("offset", ""), params.get("limit", "")
        return cls(
            offset=int(offset) if offset.isdigit() else 0,
            limit=min(max(int(limit), 1), API_PAGE_MOST) if limit.isdigit() else API_PAGE,
        )


def prompts_json(read_models: Any, identity: Any, run: Any, query: PromptQuery, page: PromptsPage,
                 url: str) -> dict[str, Any]:
    """`GET /api/runs/{id}/prompts`: a page of the prompts (of a verdict, when asked) with their draws, the total
    and the next page's link (`url` is the path it is asked at), and the dead cost. Only the page's prompts have
    their draws read: a run of 1,000 rounds x 64 prompts has 64,000."""
    org = identity.organization_id
    total = matched(read_models.prompt_verdicts(org, run.id), query)
    shown = chosen_page(read_models, org, run.id, query, page.offset, page.limit)
    draws = {p.prompt_index: read_models.prompt_draws(org, run.id, p.prompt_index).get(p.prompt_index, [])
             for p in shown}
    costs, cost_total = read_models.prompt_costs(org, run.id), read_models.prompt_cost_total(org, run.id)
    after = page.offset + len(shown)
    filters = {k: v for k, v in (("verdict", query.verdict), ("sort", query.sort)) if v != getattr(PromptQuery, k)}
    next_page = urlencode({**filters, "offset": after, "limit": page.limit}) if after < total else None
    return {
        "run_id": str(run.id),
        "passing": PASSING_WORDS,
        "verdicts": VERDICT_WORDS,
        "total": total,
        "offset": page.offset,
        "limit": page.limit,
        "next": f"{url}?{next_page}" if next_page else None,
        "prompts": [
            {
                "index": p.prompt_index,
                "verdict": p.verdict,
                "times_drawn": p.draws,
                "taught": p.taught_draws,
                "skipped": p.skipped_draws,
                "passed": p.passed_draws,
                "mean_score": p.mean_score,
                "pass_share": p.pass_share,
                "first_round": p.first_round,
                "last_round": p.last_round,
                "tokens": p.tokens,
                "sampling_seconds": p.sampling_seconds,
                "dead_tokens": p.dead_tokens,
                "dead_seconds": p.dead_seconds,
                "history": [
                    {"round": d.round_number, "mean_score": d.mean_score, "pass_share": d.pass_share,
                     "taught": d.taught, "tokens": d.tokens, "sampling_seconds": d.sampling_seconds}
                    for d in draws.get(p.prompt_index, [])
                ],
            }
            for p in shown
        ],
        "dead_cost": {
            **_cost_json(cost_total),
            "rounds": [{"round": row.round_number, **_cost_json(row.cost)} for row in costs],
        },
        "advice": dead_cost_advice(cost_total),
    }


def _cost_json(cost: DeadCost) -> dict[str, Any]:
    return {
        "groups": cost.groups, "dead_groups": cost.dead_groups, "too_easy": cost.too_easy, "too_hard": cost.too_hard,
        "sampling_seconds": cost.seconds, "dead_seconds": cost.dead_seconds, "seconds_share": cost.seconds_share,
        "tokens": cost.tokens, "dead_tokens": cost.dead_tokens, "tokens_share": cost.tokens_share,
    }
