"""A run's rounds with their prompts, as the trainer reports them (each round's prompts summed up by
trainer/prompt_summary.py) and the jobs record them, and the rollout files the trainer writes beside them: for the
Prompts tab's tests. Tests import it as `prompt_rounds` (tests/conftest.py puts this folder on sys.path)."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import torch

from jobs.recording import ProgressRecorder
from trainer.progress import PhaseSeconds, RoundScored
from trainer.prompt_summary import prompt_summary
from trainer.sampling import SampledAnswer
from trainer.scoring import ScoredRound

TOKENS = 5  # every answer's tokens
SAMPLING_SECONDS = 4.0  # every round's


def record_prompt_rounds(verity: Any, storage: Any, run_id: UUID, rounds: list[dict[int, list[float]]],
                         first: int = 1, total: int | None = None) -> None:
    """Round 0, then one round per item of `rounds` (training prompt → its answers' scores), each with its rollout
    file, whose prompts read "What is prompt N?" and answers "answer J to N in round R". From a `first` round above
    1, round 0 and the rounds before are taken as recorded already; `total`: the run's rounds (by default the last)."""
    recorder = ProgressRecorder(verity, run_id)
    total = total if total is not None else first - 1 + len(rounds)
    if first == 1:
        recorder.record(RoundScored(0, total, None, None, None, 0, 0, [], False, None, 0.3, 0,
                                    PhaseSeconds(validation=1.0), None, None, 0))
    for number, scores in enumerate(rounds, start=first):
        answers = len(next(iter(scores.values())))
        texts = [[f"answer {j} to {i} in round {number}" for j in range(answers)] for i in scores]
        scored = ScoredRound(
            indices=list(scores), answers=[[SampledAnswer(list(range(TOKENS)), False)] * answers for _ in scores],
            texts=texts, rewards=torch.tensor([scores[i] for i in scores], dtype=torch.float32), failures=[],
            graded=answers * len(scores),
        )
        recorder.record(RoundScored(
            number, total, float(scored.rewards.mean()), 0.5, 0.0, 0, scored.graded, [], True, 0.01,
            0.3 + number / (10 * total), number, PhaseSeconds(SAMPLING_SECONDS, 0.5, 2.0, 1.0), float(TOKENS), 1.0, 0,
            prompts=prompt_summary(scored),
        ))
        lines = [
            {"prompt": [{"role": "user", "content": f"What is prompt {i}?"}], "reference": str(i),
             "answers": [{"answer": texts[p][j], "reward": float(scores[i][j]), "cut_off": False, "failure": None,
                          "tokens": TOKENS} for j in range(answers)]}
            for p, i in enumerate(scores)
        ]
        staged = storage.stage(f"runs/{run_id}/rollouts/round-{number:03d}.jsonl")
        staged.write("".join(json.dumps(line) + "\n" for line in lines).encode())
        staged.commit()
