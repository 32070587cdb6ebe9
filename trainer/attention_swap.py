"""A model's attention swapped for one of ours for the duration of some calls (trainer/prompt_once.py's decode
steps, trainer/flat_rows.py's stream of rows, trainer/prefix_row.py's prefix as row 0): transformers picks each
layer's attention function by the name in the model's config, among those registered with its AttentionInterface."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from trainer.kv_cache import CACHE_FIELD
from trainer.last_layer import feed_forward_at


def attends_with_sdpa(model) -> bool:
    """Whether the model's attention is transformers' SDPA: it takes a 4-D boolean mask as given (the packed
    update's), and our attention functions, which call it, stand in for it (flat_rows, prompt_once)."""
    return getattr(model.config, "_attn_implementation", None) == "sdpa"


@contextmanager
def attention_as(model, name: str) -> Iterator[None]:
    """The model's attention is the function registered as `name` for the duration."""
    config = model.config
    was = config._attn_implementation
    config._attn_implementation = name
    try:
        yield
    finally:
        config._attn_implementation = was


def laid_out_pass(model, attention: str, logits_to_keep: int | torch.Tensor,
                  laid: dict[int, tuple[torch.Tensor, torch.Tensor]] | None, **call: Any):
    """The model called with its attention swapped for `attention`, one of ours that lays the pass's tokens out as
    rows itself, and the last layer's feed-forward run at the columns `logits_to_keep` names alone
    (trainer/last_layer.py); `call`: the model's other arguments. `laid`, where the cache is wanted (None: not),
    is where the attention puts each layer's keys and values as it laid them out, by layer index: they become the
    output's cache, in place of those the layers wrote. → the model's output"""
    with attention_as(model, attention), feed_forward_at(model, logits_to_keep) as keep:
        output = model(logits_to_keep=keep, use_cache=laid is not None, **call)
    if laid is not None:
        for index, layer in enumerate(output[CACHE_FIELD].layers):
            layer.keys, layer.values = laid[index]
    return output
