"""GRPO arithmetic as small pure functions: group advantages → uniform groups → token weights → batch → loss.

Matches TRL 1.16's GRPOTrainer with one pass per round (num_iterations=1), no KL term (beta=0) and rewards scaled
by the group's standard deviation (scale_rewards="group", TRL's default for every loss type):

- advantage of answer j to prompt i: (r_ij - mean_i) / (std_i + 1e-4), std with Bessel's correction;
- per-token surrogate: -A · exp(logp - logp.detach()); its value is -A and its gradient -A · ∇logp, because with one
  pass the new and old policies are the same, so the ratio is 1 and PPO's clipping never acts;
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


def policy_loss(
    logprobs: torch.Tensor, mask: torch.Tensor, advantages: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    """The weighted GRPO surrogate of a micro batch; summing it over a round's micro batches gives the round's loss.

    logprobs: [answers, tokens] log-probabilities of the sampled tokens under the current adapter
    mask: [answers, tokens] 1 for answer tokens, 0 for padding
    advantages, weights: [answers]

    One answer of two tokens, advantage 0.5, weight 0.5: value -0.5 (= -A · Σ weight), gradient -0.25 per logprob.
    """
    ratio = torch.exp(logprobs - logprobs.detach())  # [answers, tokens], exactly 1: one pass, no old policy
    per_token = -ratio * advantages.unsqueeze(1)  # [answers, tokens]
    return (per_token * mask * weights.unsqueeze(1)).sum()


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
    log_softmax = torch.log_softmax(answer_logits, dim=-1)
    targets = batch.input_ids[:, batch.prompt_width :]  # [answers, answer_width]
    logprobs = log_softmax.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        entropy = -(log_softmax.exp() * log_softmax).sum(-1)  # [answers, answer_width]
    return logprobs, entropy
