"""Decode steps in which every answer reads its prompt's KV cache where it lies, once per prompt, instead of a copy
of it made for each answer.

Why. The dynamic decode loop (trainer/sampling.py) answers each prompt several times: the plain way copies the
prompt's cache to one row per answer, and every step then concatenates each layer's keys and values anew, prompt
part included, and the attention reads all of it. At the tiny model's round (32 prompts, 144 answers, prompts of
33 tokens, answers of a few) that is most of the memory a step touches, and the copies and the attention were a
third of a decode step on a CPU. Here the prompts' cache stays one row per prompt; the answers' own keys and values
are the only cache that grows, written in place (long answers made the concatenations' copies grow with the square of
their length); a step's attention takes each prompt's keys once for all its answers (one product
per prompt) and each answer's own keys apart, and one softmax over both: the same attention, summed in another
order (float rounding aside).

How. `PromptOnceCache` holds the prompts' cache, each answer's prompt and the answers' own keys and values (in
place of a DynamicCache's); the decode's steps run with the model's attention swapped for `prompt_once_attention` (a
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

from trainer.attention_swap import attends_with_sdpa

ATTENTION = "verity_prompt_once"
INITIAL_COLUMNS = 16  # the answers' buffers' first width; they double when full
UNHANDLED = ("sliding_window", "softcap", "s_aux", "position_bias")  # keyword arguments the grouped path does not do


def decodes_prompt_once(model) -> bool:
    """Whether the model's attention is transformers' SDPA (the one this attention stands in for) over a plain
    dynamic cache in every layer: not a sliding window's, not a linear attention's (transformers gives those
    layers caches of their own, and masks that a given 4-D mask would replace)."""
    if not attends_with_sdpa(model):
        return False
    try:
        layers = DynamicCache(config=model.config).layers
    except (TypeError, ValueError):  # a transformers whose DynamicCache takes no config
        return False
    return all(type(layer) is DynamicLayer for layer in layers)


class PromptOnceCache(DynamicCache):
    """The prompts' cache (one row per prompt: values [prompts, kv_heads, prompt_columns, head_dim] per layer, keys
    across, [prompts, kv_heads, head_dim, prompt_columns]), each answer's prompt, `prompt_of` [answers], grouped by
    prompt (answers of one prompt are neighbours), and the answers' own keys and values.

    The answers' own are written in place into buffers that double when full, not concatenated anew at every step
    as transformers' DynamicCache does: at 128 answers of 256 tokens those copies grow with the square of the length,
    and were about half of a decode of the tiny model on a CPU. The buffers are laid out column first, [capacity,
    answers, kv_heads, head_dim], so that a step writes one contiguous block: laid out answer first, a step's write
    touched every answer's stretch of a fresh buffer, and the first steps' writes cost 50 times what they do in a
    buffer already touched (4 ms of a 45 ms sampling call of the tiny model on a CPU). `update` gives views
    [answers, kv_heads, columns, head_dim] of the columns written, which the attention's products read as they lie."""

    def __init__(self, prompts_cache, prompt_of: torch.Tensor) -> None:
        super().__init__()
        # the prompts' keys laid out for the product that scores them, [prompts, kv_heads, head_dim, prompt_columns],
        # once per decode: every step's product read them through a transposed view, which the batched product of
        # an Intel Xeon's library did about 5 times slower (a layer at 144 answers of the tiny model: ~330 us in a
        # profile of the round, 50-60 us laid out; the step's whole attention 0.7-0.98 ms against 0.89-0.95)
        self.prompt_keys_across = [layer.keys.transpose(2, 3).contiguous() for layer in prompts_cache.layers]
        self.prompt_values = [layer.values for layer in prompts_cache.layers]
        layers = len(self.prompt_values)
        self.answer_keys: list[torch.Tensor | None] = [None] * layers  # [capacity, answers, kv_heads, head_dim]
        self.answer_values: list[torch.Tensor | None] = [None] * layers
        self.written = [0] * layers  # columns written in each layer's buffers
        self.prompt_of: torch.Tensor = prompt_of
        self.keep(torch.arange(len(prompt_of), device=prompt_of.device))

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args, **kwargs):
        """Write a step's keys and values [answers, kv_heads, new, head_dim] after the layer's columns. → the
        layer's answer keys and values so far (views [answers, kv_heads, columns, head_dim])."""
        keys, values, written = self.answer_keys[layer_idx], self.answer_values[layer_idx], self.written[layer_idx]
        total = written + key_states.shape[2]
        if keys is None or values is None or total > keys.shape[0]:
            # doubling: on the whole each column is copied about once more
            capacity = max(INITIAL_COLUMNS, total, 2 * keys.shape[0] if keys is not None else 0)
            keys, values = _grown(keys, key_states, written, capacity), _grown(values, value_states, written, capacity)
            self.answer_keys[layer_idx], self.answer_values[layer_idx] = keys, values
        keys[written:total] = key_states.permute(2, 0, 1, 3)
        values[written:total] = value_states.permute(2, 0, 1, 3)
        self.written[layer_idx] = total
        return keys[:total].permute(1, 2, 0, 3), values[:total].permute(1, 2, 0, 3)

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.prompt_values[layer_idx].shape[2] + self.written[layer_idx]

    def keep(self, rows: torch.Tensor) -> None:
        """Keep the answers `rows` (in order, so still grouped by prompt)."""
        self.prompt_of = self.prompt_of[rows]
        for layer, (keys, values) in enumerate(zip(self.answer_keys, self.answer_values, strict=True)):
            if keys is not None and values is not None:
                written = self.written[layer]
                self.answer_keys[layer] = _kept(keys, rows, written)
                self.answer_values[layer] = _kept(values, rows, written)
        prompts = self.prompt_values[0].shape[0]
        per_prompt = torch.bincount(self.prompt_of, minlength=prompts)  # [prompts]
        self.slots = int(per_prompt.max())  # answers of the most answered prompt: each prompt's query slots
        first = per_prompt.cumsum(0) - per_prompt  # [prompts]: each prompt's first answer row
        # each answer's slot among prompts × slots: its prompt's block, then its place among that prompt's answers
        self.slot = self.prompt_of * self.slots + torch.arange(len(rows), device=rows.device) - first[self.prompt_of]


def _grown(buffer: torch.Tensor | None, like: torch.Tensor, written: int, capacity: int) -> torch.Tensor:
    """A buffer [capacity, answers, kv_heads, head_dim] holding the first `written` columns of `buffer`, shaped as
    `like` [answers, kv_heads, new, head_dim] otherwise."""
    answers, kv_heads, _, head_dim = like.shape
    grown = like.new_empty(capacity, answers, kv_heads, head_dim)
    if buffer is not None and written:
        grown[:written] = buffer[:written]
    return grown


def _kept(buffer: torch.Tensor, rows: torch.Tensor, written: int) -> torch.Tensor:
    """A buffer of `buffer`'s capacity holding the answers `rows` of its first `written` columns."""
    kept = buffer.new_empty(buffer.shape[0], len(rows), *buffer.shape[2:])
    kept[:written] = buffer[:written].index_select(1, rows)
    return kept


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
    prompt_keys_across, prompt_values = prompt_once.prompt_keys_across[layer], prompt_once.prompt_values[layer]
    if query.shape[2] != 1 or any(kwargs.get(name) is not None for name in UNHANDLED):
        prompt_keys = prompt_keys_across.transpose(2, 3)  # [prompts, kv_heads, prompt_columns, head_dim]
        keys = torch.cat([prompt_keys.index_select(0, prompt_once.prompt_of), key], dim=2)
        values = torch.cat([prompt_values.index_select(0, prompt_once.prompt_of), value], dim=2)
        return sdpa_attention_forward(module, query, keys, values, attention_mask, dropout=dropout, scaling=scaling,
                                      **kwargs)
    answers, heads, _, head_dim = query.shape
    prompts, kv_heads, prompt_columns, _ = prompt_values.shape
    share = heads // kv_heads  # query heads per key head
    slots, slot = prompt_once.slots, prompt_once.slot
    queries = query.view(answers, kv_heads, share, head_dim)  # [answers, kv_heads, share, head_dim]
    grouped_queries = _per_prompt(queries, prompts, slots, slot)  # [prompts, kv_heads, slots × share, head_dim]
    prompt_scores = _per_answer(grouped_queries @ prompt_keys_across, slots, slot)  # one product a prompt
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
