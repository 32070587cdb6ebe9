"""The update's fused LoRA layers (trainer/fused_lora.py) compute what peft's do, and leave the model as it was."""

from __future__ import annotations

import torch
from peft.tuners.lora import LoraLayer

from trainer.fused_lora import FusedLoraLinear, lora_fused
from trainer.grpo import build_shared_prompt_batch, shared_prompt_logprobs_and_entropy


def test_fused_layers_give_peft_layers_log_probabilities_and_gradient(adapted):
    _, model, prompts, _ = adapted
    model.train()
    batch = build_shared_prompt_batch(prompts[:4], [[5, 6, 7], [8], [9, 10], [11, 12, 13, 14], [15, 16]],
                                      [0, 1, 2, 3, 0], 0)
    trained = [p for p in model.parameters() if p.requires_grad]

    def logprobs_and_gradient():
        logprobs, entropy = shared_prompt_logprobs_and_entropy(model, batch)
        loss = (logprobs * batch.answer_mask * torch.linspace(-1, 1, logprobs.numel()).view_as(logprobs)).sum()
        return logprobs.detach(), entropy, torch.autograd.grad(loss, trained)

    logprobs, entropy, gradient = logprobs_and_gradient()
    with lora_fused(model):
        assert sum(isinstance(m, FusedLoraLinear) for m in model.modules()) == 28  # 4 layers x 7 linear
        assert not any(isinstance(m, LoraLayer) for m in model.modules())
        fused_logprobs, fused_entropy, fused_gradient = logprobs_and_gradient()
    assert sum(isinstance(m, LoraLayer) for m in model.modules()) == 28
    assert not any(isinstance(m, FusedLoraLinear) for m in model.modules())
    mask = batch.answer_mask.bool()
    assert torch.allclose(fused_logprobs[mask], logprobs[mask], atol=1e-5)
    assert torch.allclose(fused_entropy[mask], entropy[mask], atol=1e-5)
    assert any(g.abs().sum() > 0 for g in gradient)
    for fused, plain in zip(fused_gradient, gradient, strict=True):
        assert torch.allclose(fused, plain, atol=1e-6, rtol=1e-4)
