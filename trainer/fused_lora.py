"""The update's LoRA layers as one fused product each: `addmm(x·Wᵀ, x·Aᵀ, Bᵀ, alpha=scaling)`.

peft's LoRA linear layer computes `base(x) + lora_B(lora_A(dropout(x))) * scaling`: besides the two small products,
a multiplication by the scaling and an addition, each a pass over the layer's whole output, forward and backward,
and four module calls. `addmm` folds the scaling and the addition into the second product. The parameters are
the same objects (the optimizer and the gradients see no difference) and the numbers the same to float rounding
(tests/trainer/test_sampling_and_scoring.py compares the update's log-probabilities and gradient with peft's).

Only a plain layer is fused: one active adapter, no dropout, no DoRA or other variant, no LoRA bias, no fan-in-
fan-out weights, one dtype throughout; any other keeps peft's forward. For the duration of `lora_fused`, the fused
modules stand in the LoRA layers' places in the module tree, as trainer/merged_adapter.py's base layers do while
sampling.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F

_found: weakref.WeakKeyDictionary[torch.nn.Module, FusedLora] = weakref.WeakKeyDictionary()


@contextmanager
def lora_fused(model: torch.nn.Module) -> Iterator[None]:
    """The model's plain LoRA layers fused for the duration (the layers found on the first call)."""
    fused = _found.get(model)
    if fused is None:
        fused = _found[model] = FusedLora(model)
    with fused.fused():
        yield


class FusedLoraLinear(torch.nn.Module):
    """A plain peft LoRA linear layer's forward in two products (the parameters are the LoRA layer's own)."""

    def __init__(self, layer, adapter: str) -> None:
        super().__init__()
        self.weight, self.bias, self.lora_a, self.lora_b, self.scaling = lora_parts(layer, adapter)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])  # [tokens, in]
        # in place on the base product (which autograd does not keep): addmm would copy it into a new tensor first
        out = F.linear(rows, self.weight, self.bias).addmm_(F.linear(rows, self.lora_a), self.lora_b.t(),
                                                            alpha=self.scaling)  # [tokens, out]
        return out.view(*x.shape[:-1], out.shape[-1])


class FusedLora:
    """The model's plain LoRA layers (found once) and their fused stand-ins."""

    def __init__(self, model) -> None:
        self.places = [  # (parent module, attribute name, fused stand-in)
            (parent, name, fused) for parent, name, layer in lora_places(model) if (fused := _fused(layer)) is not None
        ]

    @contextmanager
    def fused(self) -> Iterator[None]:
        layers = [parent._modules[name] for parent, name, _ in self.places]
        for parent, name, fused in self.places:
            parent._modules[name] = fused
        try:
            yield
        finally:
            for (parent, name, _), layer in zip(self.places, layers, strict=True):
                parent._modules[name] = layer


def lora_places(model) -> list[tuple[torch.nn.Module, str, Any]]:
    """Each peft LoRA layer of the model, with its parent module and its name there: where a stand-in goes."""
    from peft.tuners.lora import LoraLayer

    return [(model.get_submodule(name.rpartition(".")[0]), name.rpartition(".")[2], module)
            for name, module in model.named_modules() if isinstance(module, LoraLayer)]


def _fused(layer) -> FusedLoraLinear | None:
    """The layer's fused stand-in, or None where peft's forward must stay (see the module's docstring)."""
    adapter = plain_adapter(layer)
    return None if adapter is None else FusedLoraLinear(layer, adapter)


def lora_parts(layer, adapter: str) -> tuple[torch.nn.Parameter, torch.nn.Parameter | None, torch.nn.Parameter,
                                              torch.nn.Parameter, float]:
    """A LoRA linear layer's base weight and bias, its A and B weights and its scaling for `adapter`."""
    base = layer.get_base_layer()
    return (base.weight, base.bias, layer.lora_A[adapter].weight, layer.lora_B[adapter].weight,
            float(layer.scaling[adapter]))


def plain_adapter(layer) -> str | None:
    """The one active adapter of a plain peft LoRA linear layer (see the module's docstring), or None."""
    from peft.tuners.lora.layer import Linear

    if type(layer) is not Linear or layer.fan_in_fan_out or layer.merged or layer.disable_adapters:
        return None
    adapters = [a for a in layer.active_adapters if a in layer.lora_A]
    if len(adapters) != 1:
        return None
    adapter = adapters[0]
    if (adapter in layer.lora_variant or layer.lora_bias[adapter]
            or not isinstance(layer.lora_dropout[adapter], torch.nn.Identity)):
        return None
    base = layer.get_base_layer()
    dtypes = {base.weight.dtype, layer.lora_A[adapter].weight.dtype, layer.lora_B[adapter].weight.dtype}
    if type(base) is not torch.nn.Linear or len(dtypes) != 1:
        return None
    return adapter
