"""GRPO arithmetic as small pure functions: group advantages → uniform groups → token weights → batch → loss.

Matches TRL 1.16's GRPOTrainer with no KL term (beta=0) and rewards scaled by the group's standard deviation
(scale_rewards="group", TRL's default for every loss type):

- advantage of answer j to prompt i: (r_ij - mean_i) / (std_i + 1e-4), std with Bessel's correction;
- per-token surrogate: -min(r·A, clip(r, 1-ε_low, 1+ε_high)·A) with r = exp(logp - logp_old); in a round's first
  pass the new and old policies are the same, so r is 1, the value is -A, the gradient -A · ∇logp and the clip never
  acts; later passes over the same answers (TRL's num_iterations) have r ≠ 1 and the clip holds them near the
  sampling policy;
- the loss normalisation is the named choice `loss_type`, applied as one weight per answer token (token_weights):
  grpo: mean over an answer's tokens, then mean over the round's answers;
  dapo: sum over all answer tokens / number of answer tokens in the round (global);
  dr_grpo: sum over all answer tokens / (number of answers × longest sampled answer).

Uniform groups (every answer scored alike) have advantage 0, so they add nothing to the gradient and are skipped
before any forward pass. As in TRL they still count in the normaliser's denominators, so skipping changes the
speed and never the gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from trainer.attention_swap import attends_with_sdpa
from trainer.kv_cache import CACHE_FIELD
from trainer.packed_answers import pack_answers, packed_logprobs_and_entropy
from trainer.prompt_cache import PromptBatch, padded, prompt_batch, read_prompts, select_rows
from trainer.spec import LossType

ADVANTAGE_EPSILON = 1e-4  # TRL's: keeps a group with a tiny spread from exploding


def group_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """Group-relative advantages.

    rewards: [prompts, answers] → advantages [prompts, answers]

    >>> group_advantages(torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.5, 0.5, 0.5, 0.5]])).round(decimals=4)
    tensor([[ 0.8659, -0.8659, -0.8659,  0.8659],
            [ 0.0000,  0.0000,  0.0000,  0.0000]])
    """
    mean = rewards.mean(dim=1, keepdim=True)  # [prompts, 1]
    std = rewards.std(dim=1, keepdim=True)  # [prompts, 1], unbiased as TRL's nanstd
    return (rewards - mean) / (std + ADVANTAGE_EPSILON)


def varied_groups(rewards: torch.Tensor) -> torch.Tensor:
    """Which prompts have answers that did not all score the same: the ones there is something to learn from.

    rewards: [prompts, answers] → [prompts] bool

    >>> varied_groups(torch.tensor([[1.0, 0.0], [0.3, 0.3]]))
    tensor([ True, False])
    """
    return rewards.amax(dim=1) != rewards.amin(dim=1)


def token_weights(loss_type: LossType, answer_tokens: torch.Tensor, max_answer_tokens: int) -> torch.Tensor:
    """The weight each token of each answer gets in the round's loss, so that the loss is a plain weighted sum
    that micro batches can accumulate exactly.

    answer_tokens: [answers] (every answer of the round, skipped ones included) → weights [answers]

    Two answers of 2 and 4 tokens, longest sampled answer 8:
    >>> lengths = torch.tensor([2, 4])
    >>> token_weights("grpo", lengths, 8)       # 1 / (tokens × answers)
    tensor([0.2500, 0.1250])
    >>> token_weights("dapo", lengths, 8)       # 1 / all tokens
    tensor([0.1667, 0.1667])
    >>> token_weights("dr_grpo", lengths, 8)    # 1 / (answers × longest)
    tensor([0.0625, 0.0625])
    """
    answers = answer_tokens.numel()
    lengths = answer_tokens.to(torch.float32)
    if loss_type == "grpo":
        return 1.0 / (lengths.clamp(min=1.0) * answers)
    if loss_type == "dapo":
        return torch.full_like(lengths, 1.0 / max(float(lengths.sum()), 1.0))
    if loss_type == "dr_grpo":
        return torch.full_like(lengths, 1.0 / (answers * max_answer_tokens))
    raise ValueError(f"unknown loss type {loss_type!r}")


CLIP_LOW = CLIP_HIGH = 0.2  # PPO's and TRL's clip range; DAPO's clip-higher raises the upper one to 0.28


def policy_loss(
    logprobs: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    weights: torch.Tensor,
    old_logprobs: torch.Tensor | None = None,
    clip_low: float = CLIP_LOW,
    clip_high: float = CLIP_HIGH,
) -> torch.Tensor:
    """The weighted, clipped GRPO surrogate of a micro batch, -min(r·A, clip(r, 1-ε_low, 1+ε_high)·A) per token;
    summing it over a round's micro batches gives the round's loss.

    logprobs: [answers, tokens] log-probabilities of the sampled tokens under the current adapter
    mask: [answers, tokens] 1 for answer tokens, 0 for padding
    advantages, weights: [answers]
    old_logprobs: [answers, tokens] the sampling policy's (the first pass's, detached); None in the first pass,
    where the ratio r is exactly 1 and the clip never acts

    One answer of two tokens, advantage 0.5, weight 0.5: value -0.5 (= -A · Σ weight), gradient -0.25 per logprob.
    """
    old = logprobs.detach() if old_logprobs is None else old_logprobs
    ratio = torch.exp(logprobs - old)  # [answers, tokens]
    advantage = advantages.unsqueeze(1)  # [answers, 1]
    per_token = -torch.min(ratio * advantage, torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * advantage)
    return (per_token * mask * weights.unsqueeze(1)).sum()


def clipped_tokens(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    clip_low: float = CLIP_LOW,
    clip_high: float = CLIP_HIGH,
) -> float:
    """How many answer tokens the clip held back (TRL's clip_ratio/region_mean, before dividing): a ratio below
    1-ε_low with a negative advantage, or above 1+ε_high with a positive one. Shapes as policy_loss's.

    >>> clipped_tokens(torch.tensor([[0.0, -1.0]]), torch.tensor([[-0.5, -1.0]]), torch.ones(1, 2), torch.tensor([1.0]))
    1.0
    """
    with torch.no_grad():
        ratio = torch.exp(logprobs - old_logprobs)
        advantage = advantages.unsqueeze(1)
        held = ((ratio < 1 - clip_low) & (advantage < 0)) | ((ratio > 1 + clip_high) & (advantage > 0))
        return float((held.to(mask.dtype) * mask).sum())


def micro_batches(lengths: Sequence[int], max_size: int, shrink: float = 0.75) -> list[list[int]]:
    """Group answers (by index) into micro batches of at most `max_size`, longest first, and start a new micro
    batch where the lengths drop below `shrink` × the batch's longest, so one long answer does not pad the rest.
    The loss is a weighted sum (token_weights), so the grouping changes the padding and never the gradient.

    lengths: prompt + answer tokens of each answer to train on

    >>> micro_batches([40, 38, 70, 39, 41], max_size=3)
    [[2], [4, 0, 3], [1]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[list[int]] = []
    for index in order:
        current = batches[-1] if batches else None
        if current is None or len(current) >= max_size or lengths[index] < shrink * lengths[current[0]]:
            batches.append([index])
        else:
            current.append(index)
    return batches


@dataclass(frozen=True)
class TrainingBatch:
    """Prompt + answer sequences ready for a forward pass: prompts left-padded, answers right-padded.

    input_ids, attention_mask, position_ids: [answers, prompt_width + answer_width]
    answer_mask: [answers, answer_width]
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    answer_mask: torch.Tensor
    prompt_width: int


def build_batch(prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]], pad_id: int) -> TrainingBatch:
    """Pad token-id lists into one batch. Positions count real tokens only, as generation counted them.

    >>> b = build_batch([[5, 6], [7]], [[8], [9, 10]], pad_id=0)
    >>> b.input_ids.tolist(), b.position_ids.tolist(), b.answer_mask.tolist()
    ([[5, 6, 8, 0], [0, 7, 9, 10]], [[0, 1, 2, 2], [0, 0, 1, 2]], [[1, 0], [1, 1]])
    """
    prompt_width = max(len(p) for p in prompts)
    answer_width = max(max(len(a) for a in answers), 1)
    rows = len(prompts)
    input_ids = torch.full((rows, prompt_width + answer_width), pad_id, dtype=torch.long)  # [answers, width]
    attention_mask = torch.zeros_like(input_ids)  # [answers, width]
    for row, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):
        start = prompt_width - len(prompt)
        input_ids[row, start:prompt_width] = torch.tensor(prompt, dtype=torch.long)
        input_ids[row, prompt_width : prompt_width + len(answer)] = torch.tensor(answer, dtype=torch.long)
        attention_mask[row, start : prompt_width + len(answer)] = 1
    position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)  # [answers, width]
    return TrainingBatch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids,
        answer_mask=attention_mask[:, prompt_width:].clone(),
        prompt_width=prompt_width,
    )


@dataclass(frozen=True)
class SharedPromptBatch:
    """Answers that share prompts: each prompt once (trainer/prompt_cache.py), each answer pointing at its prompt.

    prompts: the prompts as their shared prefix and each one's rest
    answer_ids, answer_mask: [answers, answer_width] (right-padded)
    answer_prompt: [answers], the row of each answer's prompt
    """

    prompts: PromptBatch
    answer_ids: torch.Tensor
    answer_mask: torch.Tensor
    answer_prompt: torch.Tensor

    def to(self, device: torch.device) -> SharedPromptBatch:
        if device.type == "cpu":
            return self
        return SharedPromptBatch(self.prompts.to(device), self.answer_ids.to(device), self.answer_mask.to(device),
                                 self.answer_prompt.to(device))


def build_shared_prompt_batch(
    prompts: Sequence[Sequence[int]], answers: Sequence[Sequence[int]], answer_prompt: Sequence[int], pad_id: int
) -> SharedPromptBatch:
    """
    >>> b = build_shared_prompt_batch([[5, 6], [5, 7]], [[8], [9, 10], [11]], [0, 0, 1], pad_id=0)
    >>> b.prompts.prefix.tolist(), b.prompts.rest_ids.tolist(), b.answer_ids.tolist(), b.answer_mask.tolist()
    ([5], [[6], [7]], [[8, 0], [9, 10], [11, 0]], [[1, 0], [1, 1], [1, 0]])
    """
    answer_ids, answer_mask = padded(answers, pad_id, left=False, width=max(max(len(a) for a in answers), 1))
    return SharedPromptBatch(
        prompts=prompt_batch(prompts, pad_id),
        answer_ids=answer_ids,  # [answers, width]
        answer_mask=answer_mask,
        answer_prompt=torch.tensor(list(answer_prompt), dtype=torch.long),
    )


def shared_prompt_logprobs_and_entropy(model, batch: SharedPromptBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """The same numbers as answer_logprobs_and_entropy, computing each prompt once instead of once per answer, and
    the prompts' shared prefix once for all of them.

    With an attention that takes a 4-D mask, each prompt and its answers run packed on one row
    (trainer/packed_answers.py). Otherwise the prompts run once with a KV cache; the cache is gathered to one row
    per answer (autograd sums the gradients of an answer group back into its prompt), and the answers run on top.
    With 8 answers of 4 tokens to a prompt of 33, 14 of them shared by every prompt, that is about 19 + 8 × 4 token
    positions per prompt instead of 8 × 37: the gradient is the same.
    """
    if attends_with_sdpa(model):  # the answers side by side after their prompt on its row (trainer/packed_answers.py)
        lengths = batch.answer_mask.sum(dim=1).tolist()
        packed = pack_answers(batch.answer_ids.cpu(), lengths, batch.answer_prompt.tolist(),
                              batch.prompts.rest_ids.shape[0], pad_id=0)
        return packed_logprobs_and_entropy(model, batch.prompts, packed)
    read = read_prompts(model, batch.prompts)
    cache = read.cache
    select_rows(cache, batch.answer_prompt)  # [prompts, ...] → [answers, ...]
    prompt_mask = read.attention_mask[batch.answer_prompt]  # [answers, cache_width]
    answer_width = batch.answer_ids.shape[1]
    positions = read.next_position[batch.answer_prompt].unsqueeze(1)  # [answers, 1]
    answer_out = model(
        input_ids=batch.answer_ids,
        attention_mask=torch.cat([prompt_mask, batch.answer_mask], dim=1),
        position_ids=positions + torch.arange(answer_width, device=positions.device),
        use_cache=True,
        **{CACHE_FIELD: cache},
    )
    first = read.next_logits[batch.answer_prompt].unsqueeze(1)  # [answers, 1, vocab]: predicts answer token 0
    logits = torch.cat([first, answer_out.logits[:, :-1, :]], dim=1).float()  # [answers, answer_width, vocab]
    return _logprobs_and_entropy(logits, batch.answer_ids)


def answer_logprobs_and_entropy(model, batch: TrainingBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities of the answer tokens and the policy's entropy at each answer position.

    → logprobs [answers, answer_width], entropy [answers, answer_width]
    """
    logits = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        use_cache=False,
    ).logits  # [answers, width, vocab]
    # the token at position t is predicted by the logits at t - 1
    answer_logits = logits[:, batch.prompt_width - 1 : -1, :].float()  # [answers, answer_width, vocab]
    return _logprobs_and_entropy(answer_logits, batch.input_ids[:, batch.prompt_width :])


def _logprobs_and_entropy(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-probability of each target token under its position's logits, and the policy's entropy at that
    position (no gradient: it is only reported).

    logits [answers, answer_width, vocab], targets [answers, answer_width] → both [answers, answer_width]
    """
    log_softmax = torch.log_softmax(logits, dim=-1)
    logprobs = log_softmax.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        entropy = -(log_softmax.exp() * log_softmax).sum(-1)
    return logprobs, entropy
