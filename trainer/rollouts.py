"""Rollout files: round-NNN.jsonl under runs/<run id>/rollouts/, one line per prompt with every answer."""

from __future__ import annotations

import json

from trainer.scoring import ScoredRound
from trainer.spec import Row, RunSpec
from trainer.storage import RunStorage


def rollout_key(run_id: str, round_number: int) -> str:
    """Where the round's rollouts go (the readers' spelling of the same key: domain/storage_keys.py, which the
    trainer's walls keep it from importing).


    >>> rollout_key("r1", 3)
    'runs/r1/rollouts/round-003.jsonl'
    """
    return f"runs/{run_id}/rollouts/round-{round_number:03d}.jsonl"


def rollout_lines(rows: list[Row], scored: ScoredRound) -> str:
    """Each line: the prompt, its reference, and every answer with its reward, cut off, failure and token length."""
    lines = []
    rewards = scored.rewards.tolist()  # as Python numbers at once, not a tensor read per answer
    for p, row in enumerate(rows):
        answers = [
            {
                "answer": scored.texts[p][j],
                "reward": rewards[p][j],
                "cut_off": answer.cut_off,
                "failure": scored.failures[p][j],
                "tokens": len(answer.token_ids),
            }
            for j, answer in enumerate(scored.answers[p])
        ]
        lines.append(json.dumps({"prompt": row.prompt, "reference": row.reference, "answers": answers}))
    return "\n".join(lines) + "\n"


def write_rollouts(spec: RunSpec, storage: RunStorage, round_number: int, scored: ScoredRound) -> None:
    rows = [spec.train_rows[i] for i in scored.indices]
    storage.put_bytes(rollout_key(spec.run_id, round_number), rollout_lines(rows, scored).encode())
