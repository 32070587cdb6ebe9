"""A round's GRPO update of the adapter: group advantages → skip uniform groups → token weights → micro batches →
loss → one optimizer step (constant learning rate, no KL term). The arithmetic is trainer/grpo.py's pure functions;
this module runs them on the model, in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import NamedTuple

import torch

from trainer.failures import RoundInterrupted
from trainer.grpo import (
    SharedPromptBatch,
    build_shared_prompt_batch,
    group_advantages,
    micro_batches,
    policy_loss,
    shared_prompt_logprobs_and_entropy,
    token_weights,
    varied_groups,
)
from trainer.model_loading import Policy
from trainer.sampling import is_out_of_memory
from trainer.scoring import ScoredRound
from trainer.spec import LossType, RunSpec


class UpdateOutOfMemory(RuntimeError):
    """A micro batch of the update did not fit in memory."""


@dataclass(frozen=True)
class UpdateResult:
    updated: bool
    signal: float  # share of prompts learned from, in [0, 1]
    loss: float | None
    token_entropy: float | None


class KeptAnswer(NamedTuple):
    """An answer to learn from: its prompt's row in the round, its tokens, its advantage and its tokens' weight."""

    prompt: int
    token_ids: list[int]
    advantage: float
    weight: float


def update_policy(spec: RunSpec, policy: Policy, optimizer, train_prompts: list[list[int]], scored: ScoredRound,
                  should_stop: Callable[[], bool]) -> UpdateResult:
    """One pass over the answers of the prompts whose answers did not all score alike, in micro batches, then
    one optimizer step (constant learning rate, no KL term)."""
    advantages = group_advantages(scored.rewards)  # [prompts, answers]
    learn_from = varied_groups(scored.rewards)  # [prompts]
    signal = float(learn_from.float().mean()) if learn_from.numel() else 0.0
    if not bool(learn_from.any()):
        return UpdateResult(updated=False, signal=signal, loss=None, token_entropy=None)

    kept = kept_answers(scored, learn_from, advantages, spec.loss_type, spec.max_answer_tokens)
    prompts = [train_prompts[i] for i in scored.indices]
    optimizer.zero_grad(set_to_none=True)
    total_loss, entropy_sum, entropy_tokens = 0.0, 0.0, 0.0
    policy.model.train()
    for indices in micro_batches([len(prompts[k.prompt]) + len(k.token_ids) for k in kept], spec.micro_batch_size):
        if should_stop():
            raise RoundInterrupted
        loss, entropy, tokens = _backward(policy, prompts, [kept[i] for i in indices])
        total_loss += loss
        entropy_sum += entropy
        entropy_tokens += tokens
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return UpdateResult(
        updated=True, signal=signal, loss=total_loss, token_entropy=entropy_sum / max(entropy_tokens, 1.0)
    )


def kept_answers(scored: ScoredRound, learn_from: torch.Tensor, advantages: torch.Tensor, loss_type: LossType,
                 max_answer_tokens: int) -> list[KeptAnswer]:
    """Every answer to a prompt in `learn_from`, with its advantage and its tokens' weight in the round's loss.

    learn_from: [prompts] bool; advantages: [prompts, answers]. The weights count every answer of the round, those
    of skipped prompts included (trainer/grpo.py: skipping changes the speed, never the gradient).
    """
    lengths = torch.tensor([len(a.token_ids) for group in scored.answers for a in group])  # [answers]
    weights = token_weights(loss_type, lengths, max_answer_tokens).view(len(scored.answers), -1)  # [prompts, answers]
    return [
        KeptAnswer(p, answer.token_ids, float(advantages[p, j]), float(weights[p, j]))
        for p in range(len(scored.answers)) if learn_from[p]
        for j, answer in enumerate(scored.answers[p])
    ]


def _backward(policy: Policy, prompts: list[list[int]], micro: list[KeptAnswer]) -> tuple[float, float, float]:
    """The micro batch's loss, back-propagated into the adapter's gradients. → loss, entropy summed over its answer
    tokens, and their number."""
    try:
        logprobs, entropy, mask = micro_batch_logprobs(policy, prompts, micro)  # [answers, tokens]
        loss = policy_loss(
            logprobs,
            mask,
            torch.tensor([m.advantage for m in micro], device=policy.device),  # [answers]
            torch.tensor([m.weight for m in micro], device=policy.device),  # [answers]
        )
        loss.backward()
    except (RuntimeError, MemoryError) as error:
        if is_out_of_memory(error):
            raise UpdateOutOfMemory(str(error)) from error
        raise
    return float(loss.detach()), float((entropy * mask).sum()), float(mask.sum())


def micro_batch_logprobs(policy: Policy, prompts: list[list[int]], micro: list[KeptAnswer]):
    """Log-probabilities and entropy of a micro batch's answers, each distinct prompt computed once.

    → logprobs, entropy, mask: [answers, answer_width]
    """
    rows = sorted({m.prompt for m in micro})
    row_of = {prompt: row for row, prompt in enumerate(rows)}
    batch = build_shared_prompt_batch(
        [prompts[p] for p in rows], [m.token_ids for m in micro], [row_of[m.prompt] for m in micro], policy.pad_id
    )
    batch = _to_device(batch, policy.device)
    logprobs, entropy = shared_prompt_logprobs_and_entropy(policy.model, batch)
    return logprobs, entropy, batch.answer_mask.to(logprobs.dtype)


def _to_device(batch: SharedPromptBatch, device: torch.device) -> SharedPromptBatch:
    if device.type == "cpu":
        return batch
    return replace(batch, **{f.name: getattr(batch, f.name).to(device) for f in fields(batch)})
