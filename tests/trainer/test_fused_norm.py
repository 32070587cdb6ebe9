"""The RMS norms as one operation each (trainer/fused_norm.py) compute what transformers' do, and only theirs."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers.models.gemma.modeling_gemma import GemmaRMSNorm
from transformers.models.llama.modeling_llama import LlamaRMSNorm
from transformers.models.qwen2.modeling_qwen2 import Qwen2RMSNorm

from trainer.fused_norm import fuse_rms_norms
from trainer.grpo import build_shared_prompt_batch, shared_prompt_logprobs_and_entropy
from trainer.model_loading import load_policy, load_tokenizer


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("norm_class", [LlamaRMSNorm, Qwen2RMSNorm])
def test_a_fused_norm_gives_transformers_numbers_bit_for_bit(norm_class, dtype):
    generator = torch.Generator().manual_seed(0)
    norm = norm_class(192, eps=1e-6).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(192, generator=generator))
    hidden = (torch.randn(8, 33, 192, generator=generator) * 3).to(dtype)
    expected = norm(hidden)
    assert fuse_rms_norms(norm) == 1
    assert torch.equal(norm(hidden), expected)


def test_a_norm_of_another_formula_keeps_its_own():
    norm = GemmaRMSNorm(192)  # scales by (1 + weight)
    assert fuse_rms_norms(norm) == 0
    assert "forward" not in vars(norm)


def test_the_fused_model_gives_the_same_log_probabilities_and_gradient(adapted):
    _, adapted_model, prompts, _ = adapted
    plain = adapted_model
    fused = copy.deepcopy(adapted_model)
    assert fuse_rms_norms(fused) == 9  # two in each of the 4 layers, one at the end
    batch = build_shared_prompt_batch(prompts[:3], [[5, 6, 7], [8], [9, 10], [11, 12]], [0, 1, 2, 0], 0)

    def logprobs_and_gradient(model):
        model.train()
        trained = [p for p in model.parameters() if p.requires_grad]
        logprobs, _ = shared_prompt_logprobs_and_entropy(model, batch)
        loss = (logprobs * batch.answer_mask * torch.linspace(-1, 1, logprobs.numel()).view_as(logprobs)).sum()
        return logprobs.detach(), torch.autograd.grad(loss, trained)

    logprobs, gradient = logprobs_and_gradient(plain)
    fused_logprobs, fused_gradient = logprobs_and_gradient(fused)
    assert torch.allclose(fused_logprobs, logprobs, atol=1e-5)  # under autograd, to float rounding
    assert any(g.abs().sum() > 0 for g in gradient)
    for one, other in zip(fused_gradient, gradient, strict=True):
        assert torch.allclose(one, other, atol=1e-7, rtol=1e-5)


def test_a_loaded_policy_has_its_norms_fused(run_spec, tmp_path):
    spec = run_spec(tmp_path)
    policy = load_policy(spec, load_tokenizer(spec), trains="linear")
    norms = [m for m in policy.model.modules() if isinstance(m, LlamaRMSNorm)]
    assert len(norms) == 9 and all("forward" in vars(m) for m in norms)
