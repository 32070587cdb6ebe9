"""A round's prompts in a few numbers each, for its progress record: the run page's Prompts tab follows every
training prompt across rounds from these (domain/runs/prompt_verdicts.py), never from the rollout files.

Parallel lists, one item per prompt in the round's order, so a round of 64 prompts adds about 2 KB to its event:
its index in the training prompts, its answers' mean score, how many of them passed (a score of at least 0.5), whether
they varied (the update learned from the group) and their tokens.
"""

from __future__ import annotations

from typing import Any

from domain.rewards.passing import PASSING_SCORE
from trainer.grpo import varied_groups
from trainer.scoring import ScoredRound


def prompt_summary(scored: ScoredRound) -> dict[str, Any]:
    """
    >>> import torch
    >>> from trainer.sampling import SampledAnswer
    >>> def answer(tokens): return SampledAnswer(token_ids=list(range(tokens)), cut_off=False)
    >>> scored = ScoredRound(indices=[7, 2], answers=[[answer(3), answer(5)], [answer(4), answer(4)]], texts=[],
    ...                      rewards=torch.tensor([[1.0, 0.1], [0.0, 0.0]]), failures=[], graded=4)
    >>> prompt_summary(scored)
    {'index': [7, 2], 'mean': [0.55, 0.0], 'passed': [1, 0], 'taught': [True, False], 'tokens': [8, 8], 'answers': 2}
    """
    rewards = scored.rewards  # [prompts, answers]
    return {
        "index": list(scored.indices),
        "mean": [round(m, 4) for m in rewards.mean(dim=1).tolist()],  # each list read at once, not by element
        "passed": (rewards >= PASSING_SCORE).sum(dim=1).tolist(),
        "taught": varied_groups(rewards).tolist(),
        "tokens": [sum(len(a.token_ids) for a in group) for group in scored.answers],
        "answers": int(rewards.shape[1]),
    }
