"""The prompts' reading before sampling with their shared prefix as one more row of the same pass, not a pass of
its own.

Why. Reading the prompts (trainer/prompt_cache.py) on top of the prefix they share (the chat template's beginning,
or a system prompt) as a pass of its own cost as much as its model calls do, whatever its length. Here it is row 0
of the prompts' pass, padded to their width, and each attention layer hands the other rows its keys and values: the
same attention, one pass. The cache the decode continues from is the one the prefix and the prompts read in turn
would leave: each layer's keys and values as the attention joined them, the prefix's before each prompt's.

How. `prefix_row_forward` runs the pass with the model's attention swapped for `prefix_row_attention` (registered
with transformers' AttentionInterface: trainer/attention_swap.py): row 0 attends causally to itself, its first
`prefix_row` columns being the prefix; the other rows attend to those columns' keys and values joined before their
own, under the caller's 4-D mask (whose first columns are the prefix's). A prefix wider than the rows (a long
system prompt before short prompts) would widen every row: the rows are then read as one stream of their real tokens
after it (trainer/flat_rows.py), as the update's packed pass reads its rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from trainer.attention_swap import attends_with_sdpa, laid_out_pass

ATTENTION = "verity_prefix_row"


def takes_prefix_row(model, prefix: torch.Tensor, columns: int) -> bool:
    """Whether a pass of `columns` columns takes the prefix as its row 0: there is one, it is no wider than the
    rows (a long system prompt before short prompts would widen every row: they go as a stream), and the
    model's attention is SDPA, on which `prefix_row_attention` runs."""
    return 0 < prefix.numel() <= columns and attends_with_sdpa(model)


@dataclass(frozen=True)
class PrefixRow:
    """Row 0's prefix: its `shared` first columns; `joined`, where the cache is wanted, each layer's keys and values
    as the attention joined them for the other rows (`_prefix_joined`), kept by the attention."""

    shared: int
    joined: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None


def prefix_row_forward(model, prefix: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor,
                       logits_to_keep: int | torch.Tensor, use_cache: bool = False, **call):
    """The model over `ids` with the prefix as row 0 of the same call. prefix [shared] (no wider than the rows);
    ids, positions [rows, columns]: each row's tokens and their positions after the prefix; mask [rows, 1,
    columns, shared + columns]: whom each row's tokens attend to, the prefix's columns first; logits_to_keep: the
    columns whose logits are wanted (the last layer's feed-forward runs at those alone: trainer/last_layer.py);
    `call`: the model's other arguments. → the model's output, row 0 the prefix's (its logits are the caller's to
    drop), and with `use_cache` the cache the prefix and the rows read in turn would leave: each row's keys and
    values [rows, kv_heads, shared + columns, head_dim], the prefix's first."""
    shared, columns = prefix.numel(), ids.shape[1]
    prefix_ids = ids.new_zeros(1, columns)  # [1, columns]: the prefix, then padding
    prefix_ids[0, :shared] = prefix
    prefix_positions = torch.arange(columns, device=ids.device).clamp(max=shared - 1).unsqueeze(0)
    row = PrefixRow(shared, {} if use_cache else None)
    return laid_out_pass(model, ATTENTION, logits_to_keep, row.joined, input_ids=torch.cat([prefix_ids, ids]),
                         attention_mask=mask, position_ids=torch.cat([prefix_positions, positions]), prefix_row=row,
                         **call)


def prefix_row_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                         attention_mask: torch.Tensor, scaling: float | None = None, dropout: float = 0.0,
                         prefix_row: PrefixRow | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """query, key, value [1 + rows, heads, columns, head_dim], row 0 the prefix in its first `prefix_row.shared`
    columns; attention_mask [rows, 1, columns, shared + columns] for the other rows. → [1 + rows, columns, heads,
    head_dim], as transformers' attention functions give it (row 0's columns after the prefix are zero: nothing
    reads them)."""
    if prefix_row is None:
        raise ValueError("prefix_row_attention needs the pass's PrefixRow as `prefix_row`")
    shared, columns = prefix_row.shared, query.shape[2]
    keys, values = _prefix_joined(key, shared), _prefix_joined(value, shared)
    if prefix_row.joined is not None:
        prefix_row.joined[module.layer_idx] = keys, values
    prefix = prefix_attention(module, query[:1], key[:1], value[:1], shared, dropout=dropout, scaling=scaling, **kwargs)
    packed, _ = sdpa_attention_forward(module, query[1:], keys, values, attention_mask, dropout=dropout,
                                       scaling=scaling, **kwargs)
    prefix = torch.cat([prefix, prefix.new_zeros(1, columns - shared, *prefix.shape[2:])], dim=1)
    return torch.cat([prefix, packed]), None


def prefix_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, shared: int,
                     **kwargs) -> torch.Tensor:
    """The prefix's own attention, causal over its first `shared` columns: query, key, value [1, heads or kv_heads,
    columns, head_dim] → [1, shared, heads, head_dim]."""
    attended, _ = sdpa_attention_forward(module, query[:, :, :shared], key[:, :, :shared], value[:, :, :shared],
                                         None, is_causal=True, **kwargs)
    return attended


def _prefix_joined(states: torch.Tensor, shared: int) -> torch.Tensor:
    """[1 + rows, kv_heads, columns, head_dim], row 0 the prefix's → each other row's [prefix | own columns]:
    [rows, kv_heads, shared + columns, head_dim] (autograd sums the prefix's gradient over the rows)."""
    rows = states.shape[0] - 1
    return torch.cat([states[:1, :, :shared].expand(rows, -1, -1, -1), states[1:]], dim=2)


AttentionInterface.register(ATTENTION, prefix_row_attention)
