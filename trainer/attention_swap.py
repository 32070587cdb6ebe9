"""A model's attention swapped for one of ours for the duration of some calls (trainer/prompt_once.py's decode
steps, trainer/flat_rows.py's stream of rows): transformers picks each layer's attention function by the name in
the model's config, among those registered with its AttentionInterface."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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
