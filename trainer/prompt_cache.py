"""Prompts read into a KV cache, each once, and the beginning they all share once for all of them: where sampling
(trainer/sampling.py) and the update's shared-prompt forward pass (trainer/grpo.py) start.

A run's prompts go through one chat template, so they begin alike: "<|im_start|>user\\nWhat is " is 14 of the tiny
model's 31-33 prompt tokens, and a system prompt makes it most of each prompt. That common prefix is computed once,
its cache copied to every prompt, and only each prompt's rest is computed on top of it: the numbers of reading each
prompt whole (to float rounding: the attention sums the same terms in another order), in fewer operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trainer.attention_swap import attends_with_sdpa
from trainer.flat_rows import FlatRows, flat_forward
from trainer.kv_cache import CACHE_FIELD
from trainer.prefix_row import prefix_row_forward, takes_prefix_row


@dataclass(frozen=True)
class PromptBatch:
    """Prompts as the prefix they share and each one's rest, left-padded so that every prompt ends in the last
    column (where its answer begins). Each prompt keeps at least one token of its own, whose logits predict its
    answer's first token.

    prefix: [prefix_tokens] (empty when there is one prompt, or nothing shared)
    rest_ids, rest_mask: [prompts, rest_width]
    """

    prefix: torch.Tensor
    rest_ids: torch.Tensor
    rest_mask: torch.Tensor

    def to(self, device: torch.device) -> PromptBatch:
        if device.type == "cpu":
            return self
        return PromptBatch(self.prefix.to(device), self.rest_ids.to(device), self.rest_mask.to(device))


def prompt_batch(prompts: Sequence[Sequence[int]], pad_id: int) -> PromptBatch:
    """
    >>> b = prompt_batch([[1, 2, 5, 6], [1, 2, 7]], pad_id=0)
    >>> b.prefix.tolist(), b.rest_ids.tolist(), b.rest_mask.tolist()
    ([1, 2], [[5, 6], [0, 7]], [[1, 1], [0, 1]])
    >>> prompt_batch([[1, 2], [1, 2, 3]], pad_id=0).prefix.tolist()  # the shorter keeps a token of its own
    [1]
    """
    shared = shared_prefix_length(prompts) if len(prompts) > 1 else 0
    shared = min(shared, min(len(p) for p in prompts) - 1)
    rest_ids, rest_mask = left_padded([p[shared:] for p in prompts], pad_id)
    return PromptBatch(torch.tensor(list(prompts[0][:shared]), dtype=torch.long), rest_ids, rest_mask)


def shared_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """
    >>> shared_prefix_length([[1, 2, 3], [1, 2, 4], [1, 5]])
    1
    """
    length = 0
    for column in zip(*sequences, strict=False):
        if any(token != column[0] for token in column):
            break
        length += 1
    return length


def left_padded(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences padded on the left, so each ends in the last column, and the mask of their real tokens.
    → ids [seqs, width], mask [seqs, width]"""
    return padded(sequences, pad_id, left=True)


def padded(sequences: Sequence[Sequence[int]], pad_id: int, *, left: bool,
           width: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequences padded to `width` (the longest's by default) on the left or the right, and the mask of their real
    tokens, built as lists and made tensors once (a tensor write per row costs more than the rows' arithmetic).
    → ids [seqs, width], mask [seqs, width]

    >>> ids, mask = padded([[5, 6], [7]], 0, left=False, width=3)
    >>> ids.tolist(), mask.tolist()
    ([[5, 6, 0], [7, 0, 0]], [[1, 1, 0], [1, 0, 0]])
    """
    width = max(len(s) for s in sequences) if width is None else width
    ids, mask = [], []
    for sequence in sequences:
        fill = width - len(sequence)
        ids.append([*[pad_id] * fill, *sequence] if left else [*sequence, *[pad_id] * fill])
        mask.append([0] * fill + [1] * len(sequence) if left else [1] * len(sequence) + [0] * fill)
    return torch.tensor(ids, dtype=torch.long), torch.tensor(mask, dtype=torch.long)


@dataclass(frozen=True)
class PromptsRead:
    """What reading the prompts leaves: the cache to continue from and where each prompt's answer begins.

    cache: the KV cache, one row per prompt, [prefix | padding | rest] along the tokens
    next_logits: [prompts, vocab] the logits at each prompt's last token (they predict the answer's first token)
    attention_mask: [prompts, cache_width] 1 at the cache's real tokens
    next_position: [prompts] each prompt's length: the position of its answer's first token
    """

    cache: Any
    next_logits: torch.Tensor
    attention_mask: torch.Tensor
    next_position: torch.Tensor


def read_prompts(model, batch: PromptBatch) -> PromptsRead:
    """The prefix once, then each prompt's rest on top of it, in one call where the model's attention takes that:
    the prefix as row 0 of the prompts' rows (trainer/prefix_row.py), or, where the prefix is wider than the rows,
    the rows' real tokens as one stream after it (trainer/flat_rows.py); else (no prefix, or another attention) the
    prefix, if any, in a call of its own, its cache copied to every prompt. Under autograd the copies' gradients sum
    back into the one prefix, as the gradients of the prompts read whole would.

    Why not the stream always, as the update's packed pass does: the prompts' rows are padded only to the longest
    prompt (a few columns), and at the Demo's 144 prompts the stream's read took 73 ms where the rows' took 60."""
    prompts, shared = batch.rest_ids.shape[0], batch.prefix.numel()
    attention_mask = torch.cat([batch.rest_mask.new_ones(prompts, shared), batch.rest_mask], dim=1)
    positions = rest_positions(batch)
    if takes_prefix_row(model, batch.prefix, batch.rest_ids.shape[1]):
        output = prefix_row_forward(model, batch.prefix, batch.rest_ids, rest_attention(batch).unsqueeze(1),
                                    positions, use_cache=True, logits_to_keep=1)
        return PromptsRead(output[CACHE_FIELD], output.logits[1:, -1, :], attention_mask, positions[:, -1] + 1)
    if shared and attends_with_sdpa(model):
        real = batch.rest_mask.bool()
        flat = FlatRows.of(shared, real)
        last = torch.zeros_like(real)
        last[:, -1] = True  # each prompt's last token: the rests are left-padded
        output = flat_forward(model, flat, batch.prefix, batch.rest_ids, rest_attention(batch).unsqueeze(1),
                              positions, kept=last, use_cache=True)
        return PromptsRead(output[CACHE_FIELD], output.logits[0], attention_mask, positions[:, -1] + 1)
    output = model(input_ids=batch.rest_ids, attention_mask=attention_mask, position_ids=positions, use_cache=True,
                   logits_to_keep=1, **read_prefix(model, batch))
    return PromptsRead(output[CACHE_FIELD], output.logits[:, -1, :], attention_mask, positions[:, -1] + 1)


def rest_attention(batch: PromptBatch) -> torch.Tensor:
    """Whom each prompt's rest tokens attend to among the keys [prefix | rest]: the prefix, and the prompt's rest up
    to itself; a padding token, itself alone (a query that sees nothing would give NaN, and 0 · NaN is NaN).
    → [prompts, rest_width, prefix + rest_width], True where a token may attend

    >>> rest_attention(PromptBatch(torch.tensor([1]), torch.tensor([[0, 5, 6]]), torch.tensor([[0, 1, 1]]))).int()
    tensor([[[1, 1, 0, 0],
             [1, 0, 1, 0],
             [1, 0, 1, 1]]], dtype=torch.int32)
    """
    device = batch.rest_ids.device
    count, rest_width = batch.rest_ids.shape
    rest = batch.rest_mask.bool()  # [prompts, rest_width]
    prefix = torch.ones(count, rest_width, batch.prefix.numel(), dtype=torch.bool, device=device)
    return torch.cat([prefix, causal(rest_width, device) & rest.unsqueeze(1) | own_key(~rest)], dim=2)


def causal(size: int, device: torch.device) -> torch.Tensor:
    """[size, size]: True where a query (row) may see a key (column) at or before it."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def own_key(padding: torch.Tensor) -> torch.Tensor:
    """padding [rows, size] → [rows, size, size]: a padding query sees its own key alone (one that sees nothing
    would give NaN)."""
    size = padding.shape[1]
    return padding.unsqueeze(2) & torch.eye(size, dtype=torch.bool, device=padding.device)


def read_prefix(model, batch: PromptBatch) -> dict[str, Any]:
    """The prompts' shared prefix read once (one row), its cache copied to every prompt. → the forward's keyword
    argument for that cache, to read the rest on top of it; none where the prompts share nothing."""
    shared = batch.prefix.numel()
    if not shared:
        return {}
    device = batch.rest_ids.device
    positions = torch.arange(shared, device=device).unsqueeze(0)  # [1, prefix_tokens]
    prefix = model(input_ids=batch.prefix.unsqueeze(0), position_ids=positions, use_cache=True, logits_to_keep=1)
    cache = prefix[CACHE_FIELD]
    select_rows(cache, torch.zeros(batch.rest_ids.shape[0], dtype=torch.long, device=device))
    return {CACHE_FIELD: cache}


def rest_positions(batch: PromptBatch) -> torch.Tensor:
    """Each rest token's position in its prompt, after the prefix (a left padding's: that of the first token).
    → [prompts, rest_width]"""
    return (batch.prefix.numel() + batch.rest_mask.cumsum(dim=1) - 1).clamp(min=0)


def select_rows(cache, rows: torch.Tensor) -> None:
    """Keep (or repeat) the cache's `rows`, in that order: transformers' batch_select_indices, done by `_rows` for
    its plain layers."""
    from transformers.cache_utils import DynamicLayer

    for layer in cache.layers:
        if type(layer) is DynamicLayer and layer.get_seq_length() > 0:
            layer.keys, layer.values = _rows(layer.keys, rows), _rows(layer.values, rows)
        else:
            layer.batch_select_indices(rows)


def _rows(tensor: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """tensor[rows]. Under autograd on a CPU, as a product with a one-hot matrix: the same numbers (products by 1
    and 0), and a gradient that is a matrix product too, where indexing's is a scatter-add several times slower
    (10% of the tiny model's update). On a GPU indexing is fast, and a TF32 product would not be exact."""
    if tensor.requires_grad and tensor.device.type == "cpu":
        one_hot = torch.nn.functional.one_hot(rows, tensor.shape[0]).to(tensor.dtype)  # [rows, tensor's rows]
        return (one_hot @ tensor.flatten(1)).view(len(rows), *tensor.shape[1:])
    return tensor.index_select(0, rows)
