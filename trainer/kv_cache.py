"""The name of the KV cache in transformers' model outputs and forward arguments, which changed in 5.x."""

from __future__ import annotations


def _cache_field() -> str:
    """The name transformers gives the KV cache, in model outputs and as the forward argument: `cache` since it
    was renamed (5.24 has it), `past_key_values` before (5.19; vLLM pins transformers below 5.23, so a run that
    samples with vLLM trains with the old name). An unknown argument would be dropped silently, so ask."""
    from transformers.modeling_outputs import CausalLMOutputWithPast

    return "cache" if "cache" in CausalLMOutputWithPast.__dataclass_fields__ else "past_key_values"


CACHE_FIELD = _cache_field()

