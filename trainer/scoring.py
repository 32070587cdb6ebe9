"""A round's answers scored: every answer's reward in [0, 1], the metric's failures and the "correct" part, for
a custom metric the sandbox's batches that graded them, by outcome, and the grading seconds per answer."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter

import torch

from domain.rewards.types import AnswerScore, Grader
from trainer.sampling import SampledAnswer
from trainer.score_rules import nearest_rank, reward_of
from trainer.tokenizing import answer_text


@dataclass
class ScoredRound:
    """A round's answers and their scores. rewards: [prompts, answers]."""

    indices: list[int]
    answers: list[list[SampledAnswer]]
    texts: list[list[str]]
    rewards: torch.Tensor
    failures: list[list[str | None]]
    graded: int
    correct: list[list[float | None]] = field(default_factory=list)  # the "correct" part, where the reward has it
    # a custom metric's sandbox batches that graded these answers, by outcome ("scored" or the kind of the batch's
    # first failure), e.g. {"scored": 5, "timeout": 1}; None for a built-in reward, which runs no sandbox
    sandbox_batches: dict[str, int] | None = None
    # the seconds grading took per graded answer, one value per graded answer (`_timed_scores` says how)
    answer_seconds: list[float] = field(default_factory=list)

    @property
    def grading_seconds_median(self) -> float | None:
        """The median grading seconds per answer; None when no answer was graded (all cut off). To the nanosecond: a
        built-in reward grades an answer in about a microsecond."""
        return round(statistics.median(self.answer_seconds), 9) if self.answer_seconds else None

    @property
    def grading_seconds_p95(self) -> float | None:
        """The 95th percentile (nearest rank) of the grading seconds per answer; None when none was graded."""
        return round(nearest_rank(sorted(self.answer_seconds), 0.95), 9) if self.answer_seconds else None

    @property
    def accuracy(self) -> float | None:
        """The mean "correct" part over every answer (a cut-off answer counts 0); None for a reward without parts."""
        values = [c for row in self.correct for c in row]
        if not any(c is not None for c in values):
            return None
        return sum(c or 0.0 for c in values) / len(values)

    @property
    def failed(self) -> int:
        """How many answers failed the metric."""
        return sum(f is not None for row in self.failures for f in row)

    @property
    def failure_kinds(self) -> list[str]:
        return sorted({f for row in self.failures for f in row if f is not None})

    @property
    def failures_by_kind(self) -> dict[str, int] | None:
        """How many answers failed the metric, by kind, e.g. {"execution": 2, "timeout": 8}; None when none did."""
        counts = Counter(f for row in self.failures for f in row if f is not None)
        return dict(sorted(counts.items())) or None


def score_answers(tokenizer, grader: Grader, answers: list[list[SampledAnswer]], references: list[str]):
    """Score every answer; a cut-off answer scores 0 and is not graded. → ScoredRound (rewards [prompts, answers])."""
    texts = [[answer_text(tokenizer, a.token_ids) for a in group] for group in answers]
    rewards = [[0.0] * len(group) for group in answers]  # a tensor at the end: one, not one write per answer
    failures: list[list[str | None]] = [[None] * len(group) for group in answers]
    correct: list[list[float | None]] = [[None] * len(group) for group in answers]
    to_grade = [(p, j) for p, group in enumerate(answers) for j, a in enumerate(group) if not a.cut_off]
    batches_before = _sandbox_batches(grader)
    scores, answer_seconds = _timed_scores(grader, batches_before is not None, to_grade, texts, references)
    batches_after = _sandbox_batches(grader)
    for (p, j), score in zip(to_grade, scores, strict=True):
        rewards[p][j] = reward_of(score)
        failures[p][j] = score.failure
        if "correct" in score.parts:
            correct[p][j] = 0.0 if score.failure else float(score.parts["correct"])
    ran = None
    if batches_before is not None and batches_after is not None:
        ran = dict(sorted((batches_after - batches_before).items()))
    shape = (len(answers), len(answers[0]) if answers else 0)  # [prompts, answers]
    return ScoredRound(indices=[], answers=answers, texts=texts,
                       rewards=torch.tensor(rewards, dtype=torch.get_default_dtype()).reshape(shape),
                       failures=failures, graded=len(to_grade), correct=correct, sandbox_batches=ran,
                       answer_seconds=answer_seconds)


def _timed_scores(grader: Grader, sandboxed: bool, to_grade: list[tuple[int, int]], texts: list[list[str]],
                  references: list[str]) -> tuple[list[AnswerScore], list[float]]:
    """The scores of the answers `to_grade` ((prompt, answer) pairs, in order), and the grading seconds per answer.

    Neither grader times each answer, so an answer's seconds are its call's time / the call's answers. A built-in
    reward (plain Python in this process) grades each prompt's answers in a call of their own, as the probe does
    (trainer/probe.py): splitting costs nothing there, and the calls' spread gives the median and 95th percentile
    their meaning. A custom metric's sandbox grades the round's answers in one call, because it runs its batches
    in parallel and a call per prompt would lose that: every answer then has the same seconds (median = p95).
    """
    calls = [to_grade] if sandboxed else [list(group) for _, group in groupby(to_grade, key=itemgetter(0))]
    scores: list[AnswerScore] = []
    seconds: list[float] = []
    for call in calls:
        if not call:  # every answer was cut off
            continue
        started = time.perf_counter()
        scores.extend(grader.score_batch([texts[p][j] for p, j in call], [references[p] for p, _ in call]))
        seconds.extend([(time.perf_counter() - started) / len(call)] * len(call))
    return scores, seconds



def _sandbox_batches(grader: Grader) -> Counter[str] | None:
    """The batches a custom metric's sandbox has run so far, by outcome, as the sandbox counts them; None for a
    built-in reward."""
    from trainer.sandbox import SandboxedMetric

    return grader.batch_outcomes if isinstance(grader, SandboxedMetric) else None
