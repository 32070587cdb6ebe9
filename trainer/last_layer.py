"""The model's last decoder layer running its feed-forward half only at the columns whose logits are wanted.

Why. A pass that keeps few logits (reading prompts keeps each prompt's last column; the update's packed pass the
answers' columns, not the prompts') still runs every column through the last layer's feed-forward network, whose
output feeds nothing but that column's logits. The attention half must run everywhere (its keys and values are
what the other columns read), the feed-forward half need not: two thirds of the last layer's products, at the tiny
model's prompt reading 18 columns in 19. The kept columns' numbers are the very same, and so is the gradient.

Only a layer whose forward is transformers' Llama decoder layer's own code (trainer/same_code.py; Mistral and
others carry copies) is changed, for the duration
of `feed_forward_at`; any other keeps its own forward and the model slices the logits as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from trainer.same_code import causal_lm, runs_code_of


@contextmanager
def feed_forward_at(model, logits_to_keep: int | torch.Tensor) -> Iterator[int | torch.Tensor]:
    """The last decoder layer computes its feed-forward half only at the columns `logits_to_keep` names (transformers'
    meaning: a count of last columns, or column indices) for the duration. → what to pass the model as its
    `logits_to_keep`: 0 (every column the layer gave), or `logits_to_keep` itself where the layer is not changed."""
    layer = _last_llama_layer(model)
    if layer is None:
        yield logits_to_keep
        return
    columns = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep

    def forward(hidden_states: torch.Tensor, **kwargs) -> torch.Tensor:
        residual = hidden_states
        attended, _ = layer.self_attn(hidden_states=layer.input_layernorm(hidden_states), **kwargs)
        hidden_states = (residual + attended)[:, columns]  # the attention ran at every column; the rest, kept ones
        return hidden_states + layer.mlp(layer.post_attention_layernorm(hidden_states))

    layer.forward = forward
    try:
        yield 0
    finally:
        del layer.forward


def _last_llama_layer(model) -> Any:
    """The model's last decoder layer where its forward is the Llama decoder layer's code, else None."""
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    layers = getattr(getattr(causal_lm(model), "model", None), "layers", None)
    if not layers:
        return None
    return layers[-1] if runs_code_of(layers[-1], LlamaDecoderLayer) else None
