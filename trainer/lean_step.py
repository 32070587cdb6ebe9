"""A decode step of a Llama model run as the tensor operations its code is made of, without the module calls around
them: the same operations in the same order on the same weights, so the same logits, bit for bit.

Why. A decode step through transformers' modules passes each layer's tensors through module calls, decorators,
output-capture hooks, a mask helper and output records: for the tiny model on a CPU, a step of one answer took 2.0 ms
of which the arithmetic was a fifth, and a step of the round's 144 answers 7.0 ms. Run as its operations, 1.6 and
6.2 ms. The dynamic decode loop (trainer/sampling.py) takes a few such steps a round.

Where. Only a model whose every part is Llama's own code (trainer/same_code.py: the causal LM, the model, the
decoder layers, the attention, the feed-forward network; Qwen2 and the others that carry a copy of a part compare
equal, a variant does not), with a plain embedding, and, at the step, projections that are plain linear layers:
`nn.Linear`, or trainer/merged_adapter.py's `MergedLinear` while the adapter is merged for sampling (an unmerged
LoRA layer on a quantized base is not). The norms and the rotary embedding are called as the model has them
(trainer/fused_norm.py's one-operation norm, whatever rotary scaling the config chose), the rotation applied with
the same arithmetic in fewer operations (`_rotated`: the same bits). The attention is
trainer/prompt_once.py's, as registered: the one the step would run through transformers.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.llama import modeling_llama as llama

from trainer.merged_adapter import MergedLinear
from trainer.prompt_once import ATTENTION as PROMPT_ONCE
from trainer.prompt_once import PromptOnceCache
from trainer.same_code import causal_lm, runs_code_of

PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")
FEED_FORWARD = ("gate_proj", "up_proj", "down_proj")


class LeanStep:
    """The step of one model (`of` says whether it has one)."""

    def __init__(self, outer) -> None:
        self.causal_lm = outer  # the transformers model, its `model` the decoder stack
        self.model = outer.model

    @classmethod
    def of(cls, model) -> LeanStep | None:
        """The model's lean step, or None where a part is not Llama's own code."""
        outer = causal_lm(model)
        inner = getattr(outer, "model", None)
        layers = getattr(inner, "layers", None)
        if not layers or type(getattr(inner, "embed_tokens", None)) is not torch.nn.Embedding:
            return None
        parts = [(outer, llama.LlamaForCausalLM), (inner, llama.LlamaModel)]
        for layer in layers:
            parts += [(layer, llama.LlamaDecoderLayer), (layer.self_attn, llama.LlamaAttention),
                      (layer.mlp, llama.LlamaMLP)]
        return cls(outer) if all(runs_code_of(part, reference) for part, reference in parts) else None

    def fits(self) -> bool:
        """Whether every projection and the output head are plain linear layers now (the adapter merged, or none),
        and the embedding a plain one."""
        plain = (torch.nn.Linear, MergedLinear)
        layers = [self.causal_lm.lm_head] + [getattr(layer.self_attn, name) for layer in self.model.layers
                                              for name in PROJECTIONS]
        layers += [getattr(layer.mlp, name) for layer in self.model.layers for name in FEED_FORWARD]
        return type(self.model.embed_tokens) is torch.nn.Embedding and all(type(layer) in plain for layer in layers)

    def __call__(self, tokens: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor,
                 cache: PromptOnceCache) -> torch.Tensor:
        """tokens, positions [rows]; mask [rows, 1, 1, columns] (True where a row may attend). → the next token's
        logits [rows, vocab], the step's keys and values added to `cache`."""
        attend = ALL_ATTENTION_FUNCTIONS[PROMPT_ONCE]  # prompt_once_attention, as registered
        rows = tokens.shape[0]
        hidden = F.embedding(tokens, self.model.embed_tokens.weight).unsqueeze(1)  # [rows, 1, hidden]
        cos, sin = self.model.rotary_emb(hidden, position_ids=positions.unsqueeze(1))
        cos, sin = cos.unsqueeze(1), _signed_halves(sin.unsqueeze(1))  # once a step, for every layer
        for layer in self.model.layers:
            attention, feed_forward = layer.self_attn, layer.mlp
            heads = (rows, 1, -1, attention.head_dim)
            normed = layer.input_layernorm.forward(hidden)
            query = _linear(attention.q_proj, normed).view(heads).transpose(1, 2)  # [rows, heads, 1, head_dim]
            key = _linear(attention.k_proj, normed).view(heads).transpose(1, 2)
            value = _linear(attention.v_proj, normed).view(heads).transpose(1, 2)
            query, key = _rotated(query, cos, sin), _rotated(key, cos, sin)
            key, value = cache.update(key, value, attention.layer_idx)
            attended, _ = attend(attention, query, key, value, mask, dropout=0.0, scaling=attention.scaling,
                                 prompt_once=cache)
            hidden = hidden + _linear(attention.o_proj, attended.reshape(rows, 1, -1).contiguous())
            normed = layer.post_attention_layernorm.forward(hidden)
            gated = feed_forward.act_fn(_linear(feed_forward.gate_proj, normed)) * _linear(feed_forward.up_proj, normed)
            hidden = hidden + _linear(feed_forward.down_proj, gated)
        return _linear(self.causal_lm.lm_head, self.model.norm.forward(hidden))[:, -1, :]


def _linear(layer, x: torch.Tensor) -> torch.Tensor:
    return F.linear(x, layer.weight, layer.bias)


def _signed_halves(sin: torch.Tensor) -> torch.Tensor:
    """`sin` with its first half negated: what rotate_half's negation multiplies by (see `_rotated`)."""
    half = sin.shape[-1] // 2
    return torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)


def _rotated(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """Llama's rotary embedding, x * cos + rotate_half(x) * sin, in four operations rather than seven: rotate_half
    is the halves swapped with the first negated, and (-a) * b is -(a * b) exactly in floating point, so swapping
    the halves (a roll by half) and multiplying by the sine with its first half negated gives the same bits. Per
    layer and step of 144 answers of the tiny model, 65 -> 49 us."""
    return x * cos + x.roll(x.shape[-1] // 2, dims=-1) * signed_sin
