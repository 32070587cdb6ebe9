"""The LoRA adapter merged into the base weights while the Transformers backend samples: each adapted layer is then
one matrix product instead of three plus peft's per-layer work (sampling 10-20% faster on the tiny model on a
CPU), for the same answers.

Exactness. Sampling from W + s·B·A merged differs from W·x + s·B·(A·x) by float rounding only, so greedy answers
are the same (tests/trainer/test_merged_sampling.py). Unmerging by subtraction is not exact: (W + Δ) - Δ leaves an
error of W's last bit that would add up over a run's rounds, and in bf16 it is large. So the base weights of the
merged layers are copied before merging and copied back after unmerging: they are frozen, so the copy is
exactly what training must see again. The copy costs the size of those base weights (for an adapter on every
linear layer, about the model's size less its embeddings) while sampling.

Where the copy lives. On the CPU, a plain layer (trainer/fused_lora.py's `plain_adapter`) is merged into a weight
of its own beside the base's, W + s·B·A written in one product, and that layer stands in the LoRA layer's place
while sampling: the base weights are never written, so there is nothing to copy back (the merged weights stay
allocated for the run: the size of the adapted base weights, which the copy took while sampling). Other CPU layers
are copied in memory beside the weights. On a GPU, in pinned CPU memory, not on the GPU:
a copy there would double the base's GPU memory while sampling, and subtraction would drift (above). The copy
goes out and comes back over PCIe (about 1 GB each way for a 0.5B model in bf16: tens of milliseconds against
seconds of sampling), and torch's pinned-memory allocator keeps the buffers for the next call. In bf16 the merged
weight W + Δ is rounded to bf16 once, where the unmerged path rounds W·x and s·B·(A·x) separately: the sampling
policy differs from the trained one by bf16 rounding either way (bench/gpu_sampling.py prints the two paths'
logit difference), and the weights training sees afterwards are exactly the same.

Where merging is not exact, the adapter stays unmerged (`merges_exactly`): a quantized base (bitsandbytes 4- or
8-bit, whose weights are not plain floats) and a base weight tied to another parameter (a Head run's output head
tied to the input embedding: merging would change the embedding too).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F

from trainer.fused_lora import lora_parts, lora_places, plain_adapter


def merges_exactly(model) -> bool:
    """Whether `MergedAdapter` may be used for this model: a peft LoRA model, not quantized, whose adapted base
    weights are floats shared with no other parameter."""
    from peft import PeftModel

    if not isinstance(model, PeftModel) or is_quantized(model):
        return False
    weights = _adapted_base_weights(model)
    if not weights or not all(w.dtype.is_floating_point for w in weights):
        return False
    adapted = {id(w) for w in weights}
    seen = [id(p) for _, p in model.named_parameters(remove_duplicate=False) if id(p) in adapted]
    return len(seen) == len(set(seen))  # a tied weight appears twice


class MergedAdapter:
    """Merges a model's LoRA adapter into its base weights for the duration of `merged()`, and takes the LoRA
    wrappers out of the module tree meanwhile.

    The adapted layers are found once (a walk of the model's modules costs milliseconds on every call). While merged,
    peft's LoRA layer computes exactly `base_layer(x)`; its forward adds checks and two module calls per layer and
    step, so the base layers stand in their wrappers' places in the tree until the context ends (sampling a round of
    the tiny model on a CPU: 7 calls per layer and decoding step saved).
    """

    def __init__(self, model) -> None:
        self.places = lora_places(model)  # (parent module, attribute name, LoRA layer)
        self.beside = {id(layer): MergedLinear(layer, adapter) for _, _, layer in self.places  # CPU plain layers
                       if layer.get_base_layer().weight.device.type == "cpu"
                       and (adapter := plain_adapter(layer)) is not None}

    @contextmanager
    def merged(self) -> Iterator[None]:
        """The adapter merged for the duration, the base weights exactly as before after it: a CPU plain layer's
        merged beside them, any other's into them and copied back rather than unmerged by subtraction (see the
        module's docstring), which also spares computing every layer's update a second time."""
        layers = [layer for _, _, layer in self.places if id(layer) not in self.beside]
        weights = [layer.get_base_layer().weight for layer in layers]
        with torch.no_grad():
            saved = [_saved_copy(w) for w in weights]
            for layer in layers:
                _merge(layer)
            for stand_in in self.beside.values():
                stand_in.merge()
        for parent, name, layer in self.places:
            parent._modules[name] = self.beside.get(id(layer)) or layer.get_base_layer()
        try:
            yield
        finally:
            for parent, name, layer in self.places:
                parent._modules[name] = layer
            with torch.no_grad():
                for weight, copy in zip(weights, saved, strict=True):
                    weight.copy_(copy, non_blocking=True)
            for layer in layers:  # what peft's unmerge leaves: no adapter merged
                layer.merged_adapters.clear()


class MergedLinear(torch.nn.Module):
    """A plain LoRA linear layer merged into a weight of its own: W + s·B·A beside the base weight W."""

    weight: torch.Tensor

    def __init__(self, layer, adapter: str) -> None:
        super().__init__()
        self.base_weight, self.bias, self.lora_a, self.lora_b, self.scaling = lora_parts(layer, adapter)
        self.register_buffer("weight", torch.empty_like(self.base_weight, requires_grad=False), persistent=False)

    def merge(self) -> None:
        torch.addmm(self.base_weight, self.lora_b, self.lora_a, alpha=self.scaling, out=self.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


@contextmanager
def adapter_merged(model) -> Iterator[None]:
    """The adapter merged for the duration (MergedAdapter's, for a model merged once)."""
    with MergedAdapter(model).merged():
        yield


def _merge(layer) -> None:
    """peft's `layer.merge()`: W += scaling·(B·A) for each active adapter; a plain float32 LoRA linear layer in
    one fused product, without peft's per-call checks and casts (peft's own merge for anything else: DoRA and
    the other variants, a LoRA bias, fan-in-fan-out weights, half precision)."""
    from peft.tuners.lora.layer import Linear

    plain = type(layer) is Linear and not layer.fan_in_fan_out
    for adapter in layer.active_adapters:
        if adapter not in layer.lora_A or adapter in layer.merged_adapters:
            continue
        weight = layer.get_base_layer().weight
        if (not plain or adapter in layer.lora_variant or layer.lora_bias[adapter]
                or weight.dtype != torch.float32 or layer.lora_A[adapter].weight.dtype != torch.float32):
            layer.merge(adapter_names=[adapter])
            continue
        weight.data.addmm_(layer.lora_B[adapter].weight, layer.lora_A[adapter].weight, alpha=layer.scaling[adapter])
        layer.merged_adapters.append(adapter)


def is_quantized(model) -> bool:
    """A base loaded quantized (bitsandbytes): transformers then sets the config's quantization_config."""
    return getattr(model.config, "quantization_config", None) is not None


def _saved_copy(weight: torch.Tensor) -> torch.Tensor:
    """The weight's copy to restore: beside it on the CPU, in pinned CPU memory for a GPU weight (copied out
    asynchronously: the merge that follows on the same stream runs after the copy)."""
    if weight.device.type == "cpu":
        return weight.detach().clone()
    copy = torch.empty(weight.shape, dtype=weight.dtype, device="cpu", pin_memory=True)
    copy.copy_(weight.detach(), non_blocking=True)
    return copy


def _adapted_base_weights(model) -> list[torch.Tensor]:
    """The weights of the base layers a LoRA adapter wraps."""
    return [layer.get_base_layer().weight for _, _, layer in lora_places(model)]
