"""A training prompt's verdict from its history across the rounds that drew it, and the cost of dead prompts (the
run page's Prompts tab and `GET /api/runs/{id}/prompts`).

A draw is one round's group of answers to the prompt. It *passed* when at least half its answers passed (a score
of at least 0.5, domain/rewards/passing.py), and it *taught* when its answers did not all score alike: a group
whose answers all scored alike has nothing to teach, and the update skipped it. The verdict, the first that holds:

- learned: its first draw failed and its latest passed;
- flipping: it passed some draws and failed others (and did not end passing after failing first);
- never taught: skipped every time it was drawn (always all alike: all passing, or all failing);
- always passing: passed every draw (nothing left to learn), though some groups still varied;
- still failing: never passed, though some groups varied.

A dead group taught nothing, yet its sampling was paid for: the round's sampling seconds are shared among its
groups in proportion to their answers' tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from domain.rewards.passing import passes

LEARNED = "learned"
FLIPPING = "flipping"
NEVER_TAUGHT = "never taught"
ALWAYS_PASSING = "always passing"
STILL_FAILING = "still failing"
VERDICTS = (LEARNED, STILL_FAILING, ALWAYS_PASSING, FLIPPING, NEVER_TAUGHT)


def draw_passed(pass_share: float) -> bool:
    """A draw passed when at least half its answers passed.

    >>> draw_passed(0.5), draw_passed(0.375)
    (True, False)
    """
    return passes(pass_share)


@dataclass(frozen=True)
class PromptTally:
    """What a verdict needs of a prompt's draws, kept up to date one draw at a time (in round order)."""

    draws: int = 0
    passed: int = 0
    taught: int = 0
    first_passed: bool = False
    last_passed: bool = False

    def drawn(self, passed: bool, taught: bool) -> PromptTally:
        """The tally after one more draw, the latest.

        >>> PromptTally().drawn(False, True).drawn(True, True)
        PromptTally(draws=2, passed=1, taught=2, first_passed=False, last_passed=True)
        """
        return PromptTally(
            draws=self.draws + 1,
            passed=self.passed + passed,
            taught=self.taught + taught,
            first_passed=self.first_passed if self.draws else passed,
            last_passed=passed,
        )

    @property
    def verdict(self) -> str:
        """
        >>> def tally(*draws): return tally_of(draws).verdict
        >>> tally((False, True), (False, True), (True, True))      # failed, then passed
        'learned'
        >>> tally((True, True), (False, True), (True, True))       # passed, failed, passed
        'flipping'
        >>> tally((False, False), (False, False))                  # all alike every time
        'never taught'
        >>> tally((True, True), (True, False))
        'always passing'
        >>> tally((False, True), (False, False))
        'still failing'
        """
        if self.draws and not self.first_passed and self.last_passed:
            return LEARNED
        if 0 < self.passed < self.draws:
            return FLIPPING
        if self.taught == 0:
            return NEVER_TAUGHT
        return ALWAYS_PASSING if self.passed == self.draws else STILL_FAILING


def tally_of(draws: Iterable[tuple[bool, bool]]) -> PromptTally:
    """The tally of (passed, taught) draws in round order."""
    tally = PromptTally()
    for passed, taught in draws:
        tally = tally.drawn(passed, taught)
    return tally


@dataclass(frozen=True)
class DeadCost:
    """What sampling cost, of a round or of a run, and how much of it went to groups that taught nothing: those
    whose answers all passed (too easy) or all failed (too hard)."""

    groups: int = 0
    dead_groups: int = 0
    too_easy: int = 0
    too_hard: int = 0
    seconds: float = 0.0
    dead_seconds: float = 0.0
    tokens: int = 0
    dead_tokens: int = 0

    def __add__(self, other: DeadCost) -> DeadCost:
        return DeadCost(
            groups=self.groups + other.groups, dead_groups=self.dead_groups + other.dead_groups,
            too_easy=self.too_easy + other.too_easy, too_hard=self.too_hard + other.too_hard,
            seconds=self.seconds + other.seconds, dead_seconds=self.dead_seconds + other.dead_seconds,
            tokens=self.tokens + other.tokens, dead_tokens=self.dead_tokens + other.dead_tokens,
        )

    @property
    def seconds_share(self) -> float:
        return self.dead_seconds / self.seconds if self.seconds else 0.0

    @property
    def tokens_share(self) -> float:
        return self.dead_tokens / self.tokens if self.tokens else 0.0


def group_seconds(sampling_seconds: float, tokens: list[int]) -> list[float]:
    """A round's sampling seconds shared among its groups in proportion to their answers' tokens (evenly when no
    group has any).

    >>> group_seconds(10.0, [300, 100]), group_seconds(4.0, [0, 0])
    ([7.5, 2.5], [2.0, 2.0])
    """
    total = sum(tokens)
    if not total:
        return [sampling_seconds / len(tokens)] * len(tokens) if tokens else []
    return [sampling_seconds * t / total for t in tokens]


def round_cost(sampling_seconds: float, means: list[float], taught: list[bool], tokens: list[int]) -> DeadCost:
    """One round's cost: a dead group's answers all scored alike, so its mean is their score and says whether they
    all passed.

    >>> cost = round_cost(10.0, [1.0, 0.0, 0.5], [False, False, True], [100, 100, 200])
    >>> cost.dead_groups, cost.too_easy, cost.too_hard, cost.dead_seconds, cost.tokens_share
    (2, 1, 1, 5.0, 0.5)
    """
    seconds = group_seconds(sampling_seconds, tokens)
    dead = [g for g, t in enumerate(taught) if not t]
    easy = sum(passes(means[g]) for g in dead)
    return DeadCost(
        groups=len(taught), dead_groups=len(dead), too_easy=easy, too_hard=len(dead) - easy,
        seconds=sampling_seconds, dead_seconds=sum(seconds[g] for g in dead),
        tokens=sum(tokens), dead_tokens=sum(tokens[g] for g in dead),
    )


def dead_cost_advice(cost: DeadCost) -> list[str]:
    """What the cost of dead prompts suggests, in the user's words.

    >>> dead_cost_advice(DeadCost(groups=64, dead_groups=3, too_easy=1, too_hard=2, seconds=40, dead_seconds=2))[1]
    '2 groups taught nothing because every answer failed: those prompts are too hard for the model. Start from an \
SFT adapter, give partial credit in the reward, or drop them.'
    """
    if not cost.groups:
        return []
    if not cost.dead_groups:
        return ["Every group taught something: no sampling went to prompts with nothing to teach."]
    advice = []
    if cost.too_easy:
        advice.append(f"{_groups(cost.too_easy)} taught nothing because every answer passed: those prompts are too "
                      "easy for the model now. Drop them, or add harder ones.")
    if cost.too_hard:
        advice.append(f"{_groups(cost.too_hard)} taught nothing because every answer failed: those prompts are too "
                      "hard for the model. Start from an SFT adapter, give partial credit in the reward, or drop them.")
    return advice


def _groups(n: int) -> str:
    return f"{n:,} group" if n == 1 else f"{n:,} groups"
