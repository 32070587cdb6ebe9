"""A round's GRPO update of the adapter: group advantages → skip uniform groups → token weights → micro batches →
loss → one optimizer step per pass (constant learning rate, no KL term). The arithmetic is trainer/grpo.py's pure
functions; this module runs them on the model, in place.

A round makes `spec.epochs` passes over its answers (TRL's num_iterations), each one optimizer step over every
micro batch. The first pass keeps each micro batch's log-probabilities as the sampling policy's; the passes after
it compute the clipped ratio against them. With `spec.max_grad_norm` the gradient is clipped to that norm before
each step (TRL's max_grad_norm); the norm before clipping is reported either way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch

from trainer.failures import RoundInterrupted
from trainer.fused_lora import lora_fused
from trainer.grpo import (
    build_shared_prompt_batch,
    clipped_tokens,
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
from trainer.training_mode import set_training


class UpdateOutOfMemory(RuntimeError):
    """A micro batch of the update did not fit in memory."""


@dataclass(frozen=True)
class UpdateResult:
    updated: bool
    signal: float  # share of prompts learned from, in [0, 1]
    loss: float | None  # the first pass's (the sampling policy's)
    token_entropy: float | None
    clipped: float | None = None  # share of answer tokens the clip held back, over the passes after the first
    grad_norm: float | None = None  # the gradient's norm before clipping, mean over the passes
    passes: int | None = None  # the passes over the answers (Epochs); None when the round did not update


class KeptAnswer(NamedTuple):
    """An answer to learn from: its prompt's row in the round, its tokens, its advantage and its tokens' weight."""

    prompt: int
    token_ids: list[int]
    advantage: float
    weight: float


def update_policy(spec: RunSpec, policy: Policy, optimizer, train_prompts: list[list[int]], scored: ScoredRound,
                  should_stop: Callable[[], bool]) -> UpdateResult:
    """`spec.epochs` passes over the answers of the prompts whose answers did not all score alike, in micro
    batches, each pass one optimizer step (constant learning rate, no KL term)."""
    advantages = group_advantages(scored.rewards)  # [prompts, answers]
    learn_from = varied_groups(scored.rewards)  # [prompts]
    signal = float(learn_from.float().mean()) if learn_from.numel() else 0.0
    if not bool(learn_from.any()):
        return UpdateResult(updated=False, signal=signal, loss=None, token_entropy=None)

    kept = kept_answers(scored, learn_from, advantages, spec.loss_type, spec.max_answer_tokens)
    prompts = [train_prompts[i] for i in scored.indices]
    batches = micro_batches([len(prompts[k.prompt]) + len(k.token_ids) for k in kept], spec.micro_batch_size)
    trained = [p for group in optimizer.param_groups for p in group["params"]]  # what the run trains
    set_training(policy.model, True)
    with lora_fused(policy.model):  # each LoRA layer one fused product (trainer/fused_lora.py)
        first_loss, entropy_sum, entropy_tokens, clipped, later_tokens, norms = _passes(
            spec, policy, optimizer, prompts, kept, batches, trained, should_stop)
    return UpdateResult(
        updated=True, signal=signal, loss=first_loss, token_entropy=entropy_sum / max(entropy_tokens, 1.0),
        clipped=clipped / later_tokens if later_tokens else None, grad_norm=sum(norms) / len(norms),
        passes=spec.epochs,
    )


def _passes(spec: RunSpec, policy: Policy, optimizer, prompts: list[list[int]], kept: list[KeptAnswer],
            batches: list[list[int]], trained: list[torch.nn.Parameter], should_stop: Callable[[], bool]):
    """`spec.epochs` passes over the micro batches, each one optimizer step. → the first pass's loss, entropy sum
    and answer tokens, the later passes' clipped and answer tokens, each pass's gradient norm before clipping."""
    sampled: list[torch.Tensor] = []  # each micro batch's log-probabilities in the first pass: the old policy's
    first_loss, entropy_sum, entropy_tokens = 0.0, 0.0, 0.0
    clipped, later_tokens, norms = 0.0, 0.0, []
    for epoch in range(spec.epochs):
        optimizer.zero_grad(set_to_none=True)
        for number, indices in enumerate(batches):
            if should_stop():
                raise RoundInterrupted
            old = sampled[number] if epoch else None
            micro = _backward(policy, prompts, [kept[i] for i in indices], old, spec.clip_low, spec.clip_high)
            if epoch == 0:
                first_loss += micro.loss
                entropy_sum += micro.entropy
                entropy_tokens += micro.tokens
                if spec.epochs > 1:
                    sampled.append(micro.logprobs)
            else:
                clipped += micro.clipped
                later_tokens += micro.tokens
        norms.append(float(torch.nn.utils.clip_grad_norm_(trained, spec.max_grad_norm or float("inf"))))
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return first_loss, entropy_sum, entropy_tokens, clipped, later_tokens, norms


def kept_answers(scored: ScoredRound, learn_from: torch.Tensor, advantages: torch.Tensor, loss_type: LossType,
                 max_answer_tokens: int) -> list[KeptAnswer]:
    """Every answer to a prompt in `learn_from`, with its advantage and its tokens' weight in the round's loss.

    learn_from: [prompts] bool; advantages: [prompts, answers]. The weights count every answer of the round, those
    of skipped prompts included (trainer/grpo.py: skipping changes the speed, never the gradient).
    """
    lengths = torch.tensor([len(a.token_ids) for group in scored.answers for a in group])  # [answers]
    weights = token_weights(loss_type, lengths, max_answer_tokens).view(len(scored.answers), -1)  # [prompts, answers]
    # as Python numbers at once: indexing the tensors answer by answer cost a few hundred tensor operations a round
    advantage_of, weight_of, learning = advantages.tolist(), weights.tolist(), learn_from.tolist()
    return [
        KeptAnswer(p, answer.token_ids, advantage_of[p][j], weight_of[p][j])
        for p in range(len(scored.answers)) if learning[p]
        for j, answer in enumerate(scored.answers[p])
    ]


class MicroBatchResult(NamedTuple):
    loss: float
    entropy: float  # summed over the micro batch's answer tokens
    tokens: float  # its answer tokens
    logprobs: torch.Tensor  # [answers, tokens], detached: the old policy's for the passes after the first
    clipped: float  # answer tokens the clip held back (none in the first pass)


def _backward(policy: Policy, prompts: list[list[int]], micro: list[KeptAnswer], old: torch.Tensor | None,
              clip_low: float, clip_high: float) -> MicroBatchResult:
    """The micro batch's loss, back-propagated into the adapter's gradients (`old`: the first pass's
    log-probabilities of these answers; None in the first pass)."""
    try:
        logprobs, entropy, mask = micro_batch_logprobs(policy, prompts, micro)  # [answers, tokens]
        advantages = torch.tensor([m.advantage for m in micro], device=policy.device)  # [answers]
        loss = policy_loss(
            logprobs,
            mask,
            advantages,
            torch.tensor([m.weight for m in micro], device=policy.device),  # [answers]
            old_logprobs=old,
            clip_low=clip_low,
            clip_high=clip_high,
        )
        loss.backward()
    except (RuntimeError, MemoryError) as error:
        if is_out_of_memory(error):
            raise UpdateOutOfMemory(str(error)) from error
        raise
    held = clipped_tokens(logprobs, old, mask, advantages, clip_low, clip_high) if old is not None else 0.0
    return MicroBatchResult(float(loss.detach()), float((entropy * mask).sum()), float(mask.sum()),
                            logprobs.detach(), held)


def micro_batch_logprobs(policy: Policy, prompts: list[list[int]], micro: list[KeptAnswer]):
    """Log-probabilities and entropy of a micro batch's answers, each distinct prompt computed once.

    → logprobs, entropy, mask: [answers, answer_width]
    """
    rows = sorted({m.prompt for m in micro})
    row_of = {prompt: row for row, prompt in enumerate(rows)}
    batch = build_shared_prompt_batch(
        [prompts[p] for p in rows], [m.token_ids for m in micro], [row_of[m.prompt] for m in micro], policy.pad_id
    )
    batch = batch.to(policy.device)
    logprobs, entropy = shared_prompt_logprobs_and_entropy(policy.model, batch)
    return logprobs, entropy, batch.answer_mask.to(logprobs.dtype)

