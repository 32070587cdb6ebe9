"""The GRPO arithmetic against hand-computed numbers: advantages, uniform groups, each loss normalisation."""

from __future__ import annotations

import pytest
import torch

from trainer.grpo import group_advantages, policy_loss, token_weights, varied_groups

# Two prompts of two answers. Prompt 1: one right, one wrong. Prompt 2: both wrong (uniform, skipped).
REWARDS = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
LENGTHS = torch.tensor([2, 3, 1, 4])  # answer tokens, in order: p1a1, p1a2, p2a1, p2a2
LONGEST = 4
# mean 0.5, unbiased std sqrt(0.5) = 0.70711; advantage 0.5 / (0.70711 + 1e-4) = 0.70700
A = 0.5 / (0.5**0.5 + 1e-4)


def test_advantages_are_relative_to_the_group_and_scaled_by_its_spread():
    advantages = group_advantages(REWARDS)
    assert advantages.flatten().tolist() == pytest.approx([A, -A, 0.0, 0.0], abs=1e-6)
    assert pytest.approx(0.707007, abs=1e-6) == A


def test_a_group_whose_answers_all_scored_alike_is_skipped():
    assert varied_groups(REWARDS).tolist() == [True, False]
    assert varied_groups(torch.tensor([[0.4, 0.4, 0.4], [1.0, 1.0, 0.9]])).tolist() == [False, True]


@pytest.mark.parametrize(
    ("loss_type", "expected_weights"),
    [
        # grpo: mean over the answer's tokens, then over the round's 4 answers
        ("grpo", [1 / (2 * 4), 1 / (3 * 4), 1 / (1 * 4), 1 / (4 * 4)]),
        # dapo: over the round's 10 answer tokens
        ("dapo", [1 / 10] * 4),
        # dr_grpo: over 4 answers × longest 4 tokens
        ("dr_grpo", [1 / 16] * 4),
    ],
)
def test_each_loss_type_weights_tokens_as_trl_normalises_them(loss_type, expected_weights):
    weights = token_weights(loss_type, LENGTHS, LONGEST)
    assert weights.tolist() == pytest.approx(expected_weights)


@pytest.mark.parametrize(
    ("loss_type", "grad_right", "grad_wrong"),
    [
        ("grpo", -A / 8, A / 12),
        ("dapo", -A / 10, A / 10),
        ("dr_grpo", -A / 16, A / 16),
    ],
)
def test_the_gradient_is_minus_advantage_times_weight_per_token(loss_type, grad_right, grad_wrong):
    # Only the varied group is trained on; the skipped answers still count in the denominators (as in TRL).
    logprobs = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, -0.7, -0.9]], requires_grad=True)  # [answers, tokens]
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    weights = token_weights(loss_type, LENGTHS, LONGEST)[:2]
    loss = policy_loss(logprobs, mask, group_advantages(REWARDS)[0], weights)
    loss.backward()
    assert logprobs.grad.flatten().tolist() == pytest.approx(
        [grad_right, grad_right, 0.0, grad_wrong, grad_wrong, grad_wrong], abs=1e-7
    )


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
def test_micro_batches_and_skipping_give_trls_full_batch_loss(loss_type):
    torch.manual_seed(0)
    rewards = torch.tensor([[1.0, 0.0, 0.5], [0.2, 0.2, 0.2], [0.0, 1.0, 1.0]])
    lengths = torch.tensor([3, 1, 2, 2, 3, 1, 4, 2, 3])
    longest = 4
    mask = (torch.arange(longest).unsqueeze(0) < lengths.unsqueeze(1)).float()  # [answers, tokens]
    logprobs = -torch.rand(9, longest)
    advantages = group_advantages(rewards).flatten()  # [answers]

    # TRL's formulas on the whole generation batch (ratio 1, so per-token loss is -A)
    per_token = -advantages.unsqueeze(1).expand(-1, longest) * mask
    trl = {
        "grpo": (per_token.sum(-1) / mask.sum(-1)).mean(),
        "dapo": per_token.sum() / mask.sum(),
        "dr_grpo": per_token.sum() / (9 * longest),
    }[loss_type]

    weights = token_weights(loss_type, lengths, longest)
    kept = varied_groups(rewards).repeat_interleave(3)  # [answers]
    ours = sum(
        policy_loss(logprobs[i : i + 2][kept[i : i + 2]], mask[i : i + 2][kept[i : i + 2]],
                    advantages[i : i + 2][kept[i : i + 2]], weights[i : i + 2][kept[i : i + 2]])
        for i in range(0, 9, 2)
    )
    assert float(ours) == pytest.approx(float(trl), abs=1e-6)
