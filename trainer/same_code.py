"""Whether a module's method is a given transformers function's very code: what lets the trainer stand its faster
equivalents in for transformers' own (trainer/fused_norm.py's norm, trainer/last_layer.py's decoder layer,
trainer/lean_step.py's decode step) and nowhere else. Model families that carry copies of Llama's code (Qwen2, Qwen3,
Mistral) compare equal; a variant (Gemma's norm) or a method some kernel library replaced does not."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch


def runs_code_of(module, reference: type[torch.nn.Module]) -> bool:
    """The module's forward is `reference`'s very code: none of its own on the instance, its class's the same."""
    return "forward" not in vars(module) and is_same_code(getattr(type(module), "forward", None), reference.forward)


def causal_lm(model):
    """The transformers model under a peft wrapper, or the model itself."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def is_same_code(method: Callable | None, reference: Callable) -> bool:
    """The two functions' bytecode, constants and names are equal (decorators unwrapped)."""
    code = getattr(inspect.unwrap(method), "__code__", None) if method is not None else None
    expected = inspect.unwrap(reference).__code__
    return code is not None and (code.co_code, code.co_consts, code.co_names) == (
        expected.co_code, expected.co_consts, expected.co_names)
