"""Rollout files: round-NNN.jsonl under runs/<run id>/rollouts/, one line per prompt with every answer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from trainer.spec import Row

if TYPE_CHECKING:
    from trainer.loop import ScoredRound


def rollout_key(run_id: str, round_number: int) -> str:
    """
    >>> rollout_key("r1", 3)
    'runs/r1/rollouts/round-003.jsonl'
    """
    return f"runs/{run_id}/rollouts/round-{round_number:03d}.jsonl"


def rollout_lines(rows: list[Row], scored: ScoredRound) -> str:
    """Each line: the prompt, its reference, and every answer with its reward, cut off, failure and token length."""
    lines = []
    for p, row in enumerate(rows):
        answers = [
            {
                "answer": scored.texts[p][j],
                "reward": float(scored.rewards[p, j]),
                "cut_off": answer.cut_off,
                "failure": scored.failures[p][j],
                "tokens": len(answer.token_ids),
            }
            for j, answer in enumerate(scored.answers[p])
        ]
        lines.append(json.dumps({"prompt": row.prompt, "reference": row.reference, "answers": answers}))
    return "\n".join(lines) + "\n"
