"""When an answer passes: a score of at least one half.

Rewards give partial credit, so "passes" can't mean a perfect 1: with the Format bonus a correct answer scores 0.9
or 1 and a well-formed wrong one 0.1; a token F1 over one half shares most of the reference's words. The trainer
counts the passing answers of each prompt of a round with it (trainer/prompt_summary.py), and the run page's
Prompts tab judges each prompt by it (domain/runs/prompt_verdicts.py).
"""

from __future__ import annotations

PASSING_SCORE = 0.5


def passes(score: float) -> bool:
    """
    >>> passes(0.9), passes(0.5), passes(0.1)
    (True, True, False)
    """
    return score >= PASSING_SCORE
