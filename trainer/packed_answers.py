"""The update's forward pass over answers packed by prompt: one row per prompt, its own tokens then its answers
side by side, each answer seeing its prompt and its own tokens only (a block-diagonal causal mask), in one pass
with the prefix all prompts share, the rows' real tokens read as one stream (trainer/flat_rows.py).

trainer/grpo.py's shared-prompt pass reads each prompt once, then copies its KV cache to one row per answer and
runs the answers on top: the copy (and its gradient) costs a matrix product per layer, the attention runs as many
small problems as answers, and every answer is padded to the longest. Packed, the answers of a prompt continue
the prompt's own row: no copy, one attention problem per prompt, and padding only at the end of a row. The prompt's
own tokens run in the same pass as its answers, not in one of their own before it: one pass of the model fewer (on
a CPU, a pass of the tiny model forward and back costs about what 80 more of its tokens do) and no cache to extend.
The numbers are the same as the plain forward's (each answer attends to the same keys with the same positions;
float rounding aside), and so is the gradient (tests/trainer/test_sampling_and_scoring.py).

This needs an attention that takes a 4-D mask as given: transformers' SDPA does (its masks are boolean, True where
a query may attend), and trainer/flat_rows.py's attention calls it; the others fall back to the copying pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from trainer.flat_rows import FlatRows, flat_forward
from trainer.prompt_cache import PromptBatch, causal, own_key, rest_attention, rest_positions


@dataclass(frozen=True)
class PackedAnswers:
    """Where each answer token sits in the packed rows.

    ids, segment, offset: [prompts, width]: the token, its answer (-1 for padding) and its place in that answer
    source: [answers, answer_width]: for each answer token, the index of the log-probability that scores it in
        [packed positions (prompts × width) | each answer's first token (answers) | a zero for padding]
    first_row, first_id: [answers]: each answer's row and its first token, which the prompt's last token scores
    """

    ids: torch.Tensor
    segment: torch.Tensor
    offset: torch.Tensor
    target: torch.Tensor  # [prompts, width]: the token that follows each position in its answer (0 where none)
    source: torch.Tensor
    first_row: torch.Tensor
    first_id: torch.Tensor


def pack_answers(answer_ids: torch.Tensor, lengths: list[int], answer_prompt: list[int], prompts: int,
                 pad_id: int) -> PackedAnswers:
    """answer_ids [answers, answer_width] right-padded, `lengths` each answer's tokens, `answer_prompt` its row.

    >>> p = pack_answers(torch.tensor([[7, 8], [9, 0], [5, 6]]), [2, 1, 2], [0, 0, 1], prompts=2, pad_id=0)
    >>> p.ids.tolist(), p.segment.tolist(), p.target.tolist()
    ([[7, 8, 9], [5, 6, 0]], [[0, 0, 1], [2, 2, -1]], [[8, 0, 0], [6, 0, 0]])
    >>> p.source.tolist()  # answer 0's second token is scored at packed position 0 (row 0, column 0)
    [[6, 0], [7, 9], [8, 3]]
    """
    answers, answer_width = answer_ids.shape
    tokens = answer_ids.tolist()
    rows: list[list[int]] = [[] for _ in range(prompts)]
    for answer, row in enumerate(answer_prompt):
        rows[row].append(answer)
    width = max(1, max(sum(lengths[a] for a in row) for row in rows))
    # built as lists and made tensors once: a tensor write per answer costs more than the packing itself
    ids = [[pad_id] * width for _ in range(prompts)]
    segment = [[-1] * width for _ in range(prompts)]
    offset = [[0] * width for _ in range(prompts)]
    target = [[0] * width for _ in range(prompts)]
    padding = prompts * width + answers  # the zero after the first tokens' log-probabilities
    source = [[padding] * answer_width for _ in range(answers)]
    for row, members in enumerate(rows):
        start = 0
        for answer in members:
            length = lengths[answer]
            own = tokens[answer][:length]
            ids[row][start : start + length] = own
            segment[row][start : start + length] = [answer] * length
            offset[row][start : start + length] = range(length)
            target[row][start : start + length - 1] = own[1:]
            source[answer][0] = prompts * width + answer
            # token i (i ≥ 1) is predicted at the position of token i - 1
            source[answer][1:length] = range(row * width + start, row * width + start + length - 1)
            start += length
    first_id = [tokens[answer][0] for answer in range(answers)]
    return PackedAnswers(*(torch.tensor(t, dtype=torch.long) for t in (ids, segment, offset, target, source,
                                                                     answer_prompt, first_id)))


def packed_logprobs_and_entropy(model, prompts: PromptBatch, packed: PackedAnswers) -> tuple[torch.Tensor,
                                                                                          torch.Tensor]:
    """Each prompt's own tokens and its answers packed after them, one row per prompt, with the prefix all prompts
    share in one pass. → logprobs, entropy: [answers, answer_width], as trainer/grpo.py's `_logprobs_and_entropy` gives
    them."""
    rest_width = prompts.rest_ids.shape[1]
    mask = packed_mask(prompts, packed.segment.to(prompts.rest_ids.device))
    positions = rest_positions(prompts)  # [prompts, rest_width]
    answer_positions = positions[:, -1:] + 1 + packed.offset.to(positions.device)  # [prompts, width]
    ids = torch.cat([prompts.rest_ids, packed.ids.to(positions.device)], dim=1)
    positions = torch.cat([positions, answer_positions], dim=1)
    real = torch.cat([prompts.rest_mask.bool(), packed.segment.to(positions.device) >= 0], dim=1)
    # the rest's last token (it predicts each answer's first) and the answers' own; not the rest before it
    kept = real.clone()
    kept[:, : rest_width - 1] = False
    flat = FlatRows.of(prompts.prefix.numel(), real)  # one stream of the real tokens (trainer/flat_rows.py)
    streamed = flat_forward(model, flat, prompts.prefix, ids, mask, positions, kept=kept,
                            use_cache=False).logits
    logits = streamed.new_zeros(*kept.shape, streamed.shape[-1])  # [prompts, rest + width, vocab], zero elsewhere
    logits = logits.index_put((kept,), streamed[0])[:, rest_width - 1 :]
    device = logits.device
    all_scores = torch.log_softmax(logits.float(), dim=-1)  # [prompts, 1 + width, vocab]
    first, positions_scores = all_scores[:, 0], all_scores[:, 1:]  # [prompts, vocab], [prompts, width, vocab]
    scored = positions_scores.gather(-1, packed.target.to(device).unsqueeze(-1)).squeeze(-1)  # [prompts, width]
    first_row = packed.first_row.to(device)  # [answers]
    first_scored = first.flatten().index_select(0, first_row * first.shape[1] + packed.first_id.to(device))
    source = packed.source.to(device)
    zero = scored.new_zeros(1)
    logprobs = torch.cat([scored.flatten(), first_scored, zero]).index_select(0, source.flatten()).view(source.shape)
    with torch.no_grad():
        entropy = -(positions_scores.exp() * positions_scores).sum(-1)  # [prompts, width]
        first_entropy = -(first.exp() * first).sum(-1)[first_row]  # [answers]
        entropy = torch.cat([entropy.flatten(), first_entropy, zero]).index_select(0, source.flatten())
    return logprobs, entropy.view(source.shape)


def packed_mask(prompts: PromptBatch, segment: torch.Tensor) -> torch.Tensor:
    """Who attends to whom in the packed rows: the queries [rest | answers] against the keys [prefix | rest |
    answers] (True where a query may attend). A rest token sees the prefix and the rest up to itself; an answer
    token sees the prefix, the whole rest and its own answer up to itself; a padding token, itself alone (a query
    that sees nothing would give NaN, and 0 · NaN is NaN). → [prompts, 1, rest + width, prefix + rest + width]

    >>> rows = PromptBatch(torch.tensor([1]), torch.tensor([[0, 5]]), torch.tensor([[0, 1]]))
    >>> mask = packed_mask(rows, torch.tensor([[0, 0, 1, -1]]))  # one prompt: [pad, 5], answers [0, 0, 1, pad]
    >>> for query in mask.int()[0, 0].tolist():  # keys: prefix | pad, 5 | 0, 0, 1, pad
    ...     print(query)
    [1, 1, 0, 0, 0, 0, 0]
    [1, 0, 1, 0, 0, 0, 0]
    [1, 0, 1, 1, 0, 0, 0]
    [1, 0, 1, 1, 1, 0, 0]
    [1, 0, 1, 0, 0, 1, 0]
    [0, 0, 0, 0, 0, 0, 1]
    """
    device = segment.device
    count, width = segment.shape
    shared, rest_width = prompts.prefix.numel(), prompts.rest_ids.shape[1]
    rest = prompts.rest_mask.bool()  # [prompts, rest_width]
    real = segment >= 0  # [prompts, width]

    rest_rows = torch.cat([rest_attention(prompts).to(device),
                           torch.zeros(count, rest_width, width, dtype=torch.bool, device=device)], dim=2)
    same_answer = (segment.unsqueeze(2) == segment.unsqueeze(1)) & real.unsqueeze(2)  # [prompts, width, width]
    answer_rows = torch.cat([
        real.unsqueeze(2).expand(count, width, shared),
        real.unsqueeze(2) & rest.unsqueeze(1),
        same_answer & causal(width, device) | own_key(~real),
    ], dim=2)
    return torch.cat([rest_rows, answer_rows], dim=1).unsqueeze(1)
