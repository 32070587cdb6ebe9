"""Rows of tokens read by the model as one stream of their real tokens, the prompts' shared prefix first: the padding
goes through the attention alone, not through every layer.

Why. The update's packed pass (trainer/packed_answers.py) and the prompts' reading before sampling
(trainer/prompt_cache.py) lay their tokens out as rows, one per prompt, padded to the longest. The attention needs
rows; every other part of a layer works token by token, and computed the padding as if it were tokens. At the tiny
model's update a sixth of the positions were padding (19 prompt tokens and 23 to 34 answer tokens to a row), and the
prefix all prompts share (the chat template's beginning) rode as one more row padded to the rows' width, three
quarters of it padding. A prefix wider than the rows (a long system prompt) needed a pass of its own.

How. `flat_forward` hands the model one row: the prefix's tokens, then each row's real tokens in turn (`FlatRows`
knows where each one came from). The model's attention is swapped (trainer/attention_swap.py) for
`flat_rows_attention`, which lays the stream's queries, keys and values out as the padded rows again, attends (the
prefix causally by itself; each row to the prefix's keys and values joined before its own, under the caller's 4-D
mask) and gathers the real tokens' outputs back into the stream. Autograd sums the prefix's gradient over the rows
that read it. The numbers are those of the rows read whole, to float rounding, and so is the cache left for the
decode to continue from: the attention keeps each layer's keys and values as it laid them out for the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from trainer.attention_swap import laid_out_pass
from trainer.prefix_row import prefix_attention

ATTENTION = "verity_flat_rows"


@dataclass(frozen=True)
class FlatRows:
    """The stream: the `shared` prefix tokens, then the rows' real tokens, row by row.

    real: [rows, width] True at the rows' real tokens
    place: [real tokens] each real token's index in the padded rows (row × width + column), in stream order
    """

    shared: int
    real: torch.Tensor
    place: torch.Tensor
    cache: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None  # where the rows' cache is wanted: each
    # layer's keys and values as `joined` gives them, kept by the attention

    @classmethod
    def of(cls, shared: int, real: torch.Tensor) -> FlatRows:
        """
        >>> flat = FlatRows.of(2, torch.tensor([[False, True], [True, True]]))
        >>> flat.place.tolist(), flat.stream(torch.tensor([7, 8]), torch.tensor([[0, 5], [6, 9]])).tolist()
        ([1, 2, 3], [[7, 8, 5, 6, 9]])
        >>> flat.stream_index(torch.tensor([[False, True], [False, True]])).tolist()  # each row's last token
        [2, 4]
        """
        return cls(shared, real, real.flatten().nonzero().squeeze(1))

    def stream(self, prefix: torch.Tensor, padded: torch.Tensor) -> torch.Tensor:
        """prefix [shared], padded [rows, width] → the stream's [1, shared + real tokens]."""
        return torch.cat([prefix, padded.flatten().index_select(0, self.place)]).unsqueeze(0)

    def stream_index(self, kept: torch.Tensor) -> torch.Tensor:
        """kept [rows, width], True at real tokens → their places in the stream, in stream order."""
        order = self.real.flatten().cumsum(0) - 1 + self.shared  # [rows × width]
        return order[kept.flatten()]

    def padded(self, states: torch.Tensor) -> torch.Tensor:
        """The rows' part of the stream laid out as the padded rows, zero at the padding: [heads, real tokens,
        head_dim] → [rows, heads, width, head_dim]."""
        heads, _, head_dim = states.shape
        rows, width = self.real.shape
        laid = states.new_zeros(rows * width, heads, head_dim).index_copy(0, self.place, states.transpose(0, 1))
        return laid.view(rows, width, heads, head_dim).transpose(1, 2)

    def joined(self, states: torch.Tensor) -> torch.Tensor:
        """The stream's keys or values [1, kv_heads, shared + real tokens, head_dim] as each row's [prefix | own
        columns]: [rows, kv_heads, shared + width, head_dim]."""
        own = self.padded(states[0, :, self.shared :])
        if not self.shared:
            return own
        return torch.cat([states[:, :, : self.shared].expand(own.shape[0], -1, -1, -1), own], dim=2)


def flat_forward(model, flat: FlatRows, prefix: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor,
                 positions: torch.Tensor, kept: torch.Tensor, use_cache: bool, **call):
    """The model over the rows `ids` [rows, width] on top of `prefix` [shared], read as one stream. mask [rows, 1,
    width, shared + width]: whom each row's tokens attend to, the prefix's columns first; positions [rows, width]:
    each token's position after the prefix; kept [rows, width]: the real tokens whose logits are wanted (the last
    layer's feed-forward runs at those alone: trainer/last_layer.py); `call`: the model's other arguments. → the
    model's output, its logits [1, kept tokens, vocab] in stream order (row by row), and with `use_cache` the cache
    the prefix and the rows read in turn would leave: each row's keys and values [rows, kv_heads, shared + width,
    head_dim], the prefix's first, zero at the padding."""
    flat = replace(flat, cache={} if use_cache else None)
    stream_positions = flat.stream(torch.arange(flat.shared, device=positions.device), positions)
    return laid_out_pass(model, ATTENTION, flat.stream_index(kept), flat.cache, input_ids=flat.stream(prefix, ids),
                         attention_mask=mask, position_ids=stream_positions, flat_rows=flat, **call)


def flat_rows_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask: torch.Tensor, scaling: float | None = None, dropout: float = 0.0,
                        flat_rows: FlatRows | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """query [1, heads, stream, head_dim], key, value [1, kv_heads, stream, head_dim]: the stream's, prefix
    first; attention_mask [rows, 1, width, shared + width] for the rows. → [1, stream, heads, head_dim], as
    transformers' attention functions give it."""
    if flat_rows is None:
        raise ValueError("flat_rows_attention needs the stream's FlatRows as `flat_rows`")
    shared = flat_rows.shared
    keys, values = flat_rows.joined(key), flat_rows.joined(value)
    if flat_rows.cache is not None:
        flat_rows.cache[module.layer_idx] = keys, values
    rows, _ = sdpa_attention_forward(module, flat_rows.padded(query[0, :, shared:]), keys, values, attention_mask,
                                     dropout=dropout, scaling=scaling, **kwargs)  # [rows, width, heads, head_dim]
    rows = rows.flatten(0, 1).index_select(0, flat_rows.place)  # [real tokens, heads, head_dim]
    if not shared:
        return rows.unsqueeze(0), None
    prefix = prefix_attention(module, query, key, value, shared, dropout=dropout, scaling=scaling, **kwargs)
    return torch.cat([prefix[0], rows]).unsqueeze(0), None


AttentionInterface.register(ATTENTION, flat_rows_attention)
