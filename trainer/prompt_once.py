"""Decode steps in which every answer reads its prompt's KV cache where it lies, once per prompt, instead of a copy
of it made for each answer.

Why. The dynamic decode loop (trainer/sampling.py) answers each prompt several times: the plain way copies the
prompt's cache to one row per answer, and every step then concatenates each layer's keys and values anew, prompt
part included, and the attention reads all of it. At the tiny model's round (32 prompts, 144 answers, prompts of
33 tokens, answers of a few) that is most of the memory a step touches, and the copies and the attention were a
third of a decode step on a CPU. Here the prompts' cache stays one row per prompt; the answers' own keys and values
are the only cache that grows; a step's attention takes each prompt's keys once for all its answers (one product
per prompt) and each answer's own keys apart, and one softmax over both: the same attention, summed in another
order (float rounding aside).

How. `PromptOnceCache` is a DynamicCache of the answers' own keys and values that also holds the prompts' cache and
each answer's prompt; the decode's steps run with the model's attention swapped for `prompt_once_attention` (a
function registered with transformers' AttentionInterface: trainer/attention_swap.py), and each step's call passes
it the cache as the keyword `prompt_once` and a 4-D mask over [prompt | answer] columns. Where the attention gets
what it does not handle here (a sliding window, a soft cap, sinks, more than one query token), it joins the
prompt's keys to each answer's and runs transformers' SDPA on them: slower, the same numbers.

Only models whose attention is transformers' SDPA over a plain dynamic cache decode so (`decodes_prompt_once`).
"""

from __future__ import annotations

import torch
from transformers import AttentionInterface, DynamicCache
from transformers.cache_utils import DynamicLayer
from transformers.integrations.sdpa_attention import sdpa_attention_forward

ATTENTION = "verity_prompt_once"
UNHANDLED = ("sliding_window", "softcap", "s_aux", "position_bias")  # keyword arguments the grouped path does not do


def decodes_prompt_once(model) -> bool:
    """Whether the model's attention is transformers' SDPA (the one this attention stands in for) over a plain
    dynamic cache in every layer: not a sliding window's, not a linear attention's (transformers gives those
    layers caches of their own, and masks that a given 4-D mask would replace)."""
    if getattr(model.config, "_attn_implementation", None) != "sdpa":
        return False
    try:
        layers = DynamicCache(config=model.config).layers
    except (TypeError, ValueError):  # a transformers whose DynamicCache takes no config
        return False
    return all(type(layer) is DynamicLayer for layer in layers)


class PromptOnceCache(DynamicCache):
    """The answers' own keys and values (the DynamicCache: one row per answer), the prompts' cache beside them (one
    row per prompt, [prompts, kv_heads, prompt_columns, head_dim] per layer) and each answer's prompt, `prompt_of`
    [answers], grouped by prompt (answers of one prompt are neighbours)."""

    def __init__(self, prompts_cache, prompt_of: torch.Tensor) -> None:
        super().__init__()
        self.prompt_keys = [layer.keys for layer in prompts_cache.layers]
        self.prompt_values = [layer.values for layer in prompts_cache.layers]
        self.prompt_of: torch.Tensor = prompt_of
        self.keep(torch.arange(len(prompt_of), device=prompt_of.device))

    def keep(self, rows: torch.Tensor) -> None:
        """Keep the answers `rows` (in order, so still grouped by prompt)."""
        self.prompt_of = self.prompt_of[rows]
        for layer in self.layers:
            if layer.is_initialized and layer.keys.numel():
                layer.keys, layer.values = layer.keys.index_select(0, rows), layer.values.index_select(0, rows)
        prompts = self.prompt_keys[0].shape[0]
        per_prompt = torch.bincount(self.prompt_of, minlength=prompts)  # [prompts]
        self.slots = int(per_prompt.max())  # answers of the most answered prompt: each prompt's query slots
        first = per_prompt.cumsum(0) - per_prompt  # [prompts]: each prompt's first answer row
        # each answer's slot among prompts × slots: its prompt's block, then its place among that prompt's answers
        self.slot = self.prompt_of * self.slots + torch.arange(len(rows), device=rows.device) - first[self.prompt_of]


def prompt_once_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                          attention_mask: torch.Tensor, scaling: float | None = None, dropout: float = 0.0,
                          prompt_once: PromptOnceCache | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """Attention of each answer's query over its prompt's keys and its own. query [answers, heads, 1, head_dim];
    key, value: the answers' own [answers, kv_heads, answer_columns, head_dim]; attention_mask [answers, 1, 1,
    prompt_columns + answer_columns], True where a query may attend. → [answers, 1, heads, head_dim], as
    transformers' attention functions give it."""
    if prompt_once is None:
        raise ValueError("prompt_once_attention needs the decode's PromptOnceCache as `prompt_once`")
    layer = module.layer_idx
    prompt_keys, prompt_values = prompt_once.prompt_keys[layer], prompt_once.prompt_values[layer]
    if query.shape[2] != 1 or any(kwargs.get(name) is not None for name in UNHANDLED):
        keys = torch.cat([prompt_keys.index_select(0, prompt_once.prompt_of), key], dim=2)
        values = torch.cat([prompt_values.index_select(0, prompt_once.prompt_of), value], dim=2)
        return sdpa_attention_forward(module, query, keys, values, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    answers, heads, _, head_dim = query.shape
    prompts, kv_heads, prompt_columns, _ = prompt_keys.shape
    share = heads // kv_heads  # query heads per key head
    slots, slot = prompt_once.slots, prompt_once.slot
    queries = query.view(answers, kv_heads, share, head_dim)  # [answers, kv_heads, share, head_dim]
    grouped_queries = _per_prompt(queries, prompts, slots, slot)  # [prompts, kv_heads, slots × share, head_dim]
    prompt_scores = _per_answer(grouped_queries @ prompt_keys.transpose(2, 3), slots, slot)  # one product a prompt
    own_scores = queries @ key.transpose(2, 3)  # [answers, kv_heads, share, answer_columns]
    scores = torch.cat([prompt_scores, own_scores], dim=3)  # [answers, kv_heads, share, all columns]
    scale = scaling if scaling is not None else head_dim ** -0.5
    scores = (scores * scale).masked_fill(~attention_mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    prompt_weights = _per_prompt(weights[..., :prompt_columns].contiguous(), prompts, slots, slot)
    output = (_per_answer(prompt_weights @ prompt_values, slots, slot)
              + weights[..., prompt_columns:] @ value)  # [answers, kv_heads, share, head_dim]
    return output.view(answers, 1, heads, head_dim), None


def _per_prompt(rows: torch.Tensor, prompts: int, slots: int, slot: torch.Tensor) -> torch.Tensor:
    """[answers, kv_heads, share, n] → [prompts, kv_heads, slots × share, n]: each prompt's answers side by side
    (its empty slots zero)."""
    _, kv_heads, share, n = rows.shape
    grouped = rows.new_zeros(prompts * slots, kv_heads, share, n).index_copy_(0, slot, rows)
    return grouped.view(prompts, slots, kv_heads, share, n).transpose(1, 2).reshape(prompts, kv_heads, slots * share, n)


def _per_answer(grouped: torch.Tensor, slots: int, slot: torch.Tensor) -> torch.Tensor:
    """_per_prompt's inverse: [prompts, kv_heads, slots × share, n] → [answers, kv_heads, share, n]."""
    prompts, kv_heads, _, n = grouped.shape
    by_slot = grouped.view(prompts, kv_heads, slots, -1, n).transpose(1, 2)  # [prompts, slots, kv_heads, share, n]
    return by_slot.reshape(prompts * slots, kv_heads, -1, n).index_select(0, slot)


AttentionInterface.register(ATTENTION, prompt_once_attention)
