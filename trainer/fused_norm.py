"""The model's RMS norms as torch's one `rms_norm` operation each, instead of transformers' seven.

transformers' Llama-family norm (`LlamaRMSNorm`, and the copies of it that Qwen2, Qwen3 and Mistral carry) is
written out in tensor operations: a cast to float32, a square, a mean, an addition, a reciprocal root, a product, a
cast back and the weight's product, each a pass over the hidden states, forward and backward. A model has two per
layer and one at the end, and on a CPU their passes and autograd nodes were a tenth of the tiny model's update.
`torch.nn.functional.rms_norm` computes the same in one operation; the numbers are the same (bit for bit on a CPU
in float32, bfloat16 and float16: tests/trainer/test_fused_norm.py), and so are the gradients, to float rounding.

Only a norm whose forward is that very code is changed (trainer/same_code.py, against `LlamaRMSNorm.forward`):
Gemma's (1 + weight), or a norm some kernel library replaced, keep their own. The weight stays the module's own
parameter; only the instance's `forward` is another.
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F

from trainer.same_code import runs_code_of


def fuse_rms_norms(model: torch.nn.Module) -> int:
    """Gives each Llama-family RMS norm of the model the one-operation forward. → how many it changed."""
    changed = 0
    for module in model.modules():
        if _is_llama_rms_norm(module):
            module.forward = types.MethodType(_fused_forward, module)
            changed += 1
    return changed


def _fused_forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
    normalized_shape = (hidden_states.shape[-1],)
    if hidden_states.dtype == torch.float32 and self.weight.dtype == torch.float32:
        return F.rms_norm(hidden_states, normalized_shape, self.weight, self.variance_epsilon)
    # transformers normalizes in float32 and multiplies by the weight in the input's own dtype
    normalized = F.rms_norm(hidden_states.float(), normalized_shape, None, self.variance_epsilon)
    return self.weight * normalized.to(hidden_states.dtype)


def _is_llama_rms_norm(module: torch.nn.Module) -> bool:
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    return hasattr(module, "variance_epsilon") and runs_code_of(module, LlamaRMSNorm)
