"""A round's answers scored: every answer's reward in [0, 1], the metric's failures and the "correct" part."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from domain.rewards.types import Grader
from trainer.sampling import SampledAnswer
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


def score_answers(tokenizer, grader: Grader, answers: list[list[SampledAnswer]], references: list[str]):
    """Score every answer; a cut-off answer scores 0 and is not graded. → ScoredRound (rewards [prompts, answers])."""
    texts = [[answer_text(tokenizer, a.token_ids) for a in group] for group in answers]
    rewards = torch.zeros(len(answers), len(answers[0]) if answers else 0)  # [prompts, answers]
    failures: list[list[str | None]] = [[None] * len(group) for group in answers]
    correct: list[list[float | None]] = [[None] * len(group) for group in answers]
    to_grade = [(p, j) for p, group in enumerate(answers) for j, a in enumerate(group) if not a.cut_off]
    scores = grader.score_batch([texts[p][j] for p, j in to_grade], [references[p] for p, _ in to_grade])
    for (p, j), score in zip(to_grade, scores, strict=True):
        rewards[p, j] = 0.0 if score.failure else min(max(float(score.value), 0.0), 1.0)
        failures[p][j] = score.failure
        if "correct" in score.parts:
            correct[p][j] = 0.0 if score.failure else float(score.parts["correct"])
    return ScoredRound(indices=[], answers=answers, texts=texts, rewards=rewards, failures=failures,
                       graded=len(to_grade), correct=correct)
