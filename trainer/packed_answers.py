"""The update's forward pass over answers packed by prompt: one row per prompt, its answers side by side after it,
each answer seeing its prompt and its own tokens only (a block-diagonal causal mask).

trainer/grpo.py's shared-prompt pass reads each prompt once, then copies its KV cache to one row per answer and
runs the answers on top: the copy (and its gradient) costs a matrix product per layer, the attention runs as many
small problems as answers, and every answer is padded to the longest. Packed, the answers of a prompt continue
the prompt's own cache row: no copy, one attention problem per prompt, and padding only at the end of a row. The
numbers are the same as the plain forward's (each answer attends to the same keys with the same positions; float
rounding aside), and so is the gradient (tests/trainer/test_sampling_and_scoring.py).

This needs an attention that takes a 4-D mask as given: transformers' SDPA does (its masks are boolean, True where
a query may attend); the others fall back to the copying pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from trainer.kv_cache import CACHE_FIELD
from trainer.prompt_cache import PromptsRead


def packs_answers(model) -> bool:
    """Whether the model's attention takes a custom 4-D boolean mask (transformers' SDPA)."""
    return getattr(model.config, "_attn_implementation", None) == "sdpa"


@dataclass(frozen=True)
class PackedAnswers:
    """Where each answer token sits in the packed rows.

    ids, segment, offset: [prompts, width]: the token, its answer (-1 for padding) and its place in that answer
    source: [answers, answer_width]: for each answer token, the index of the log-probability that scores it in
        [packed positions (prompts × width) | each answer's first token (answers) | a zero for padding]
    """

    ids: torch.Tensor
    segment: torch.Tensor
    offset: torch.Tensor
    target: torch.Tensor  # [prompts, width]: the token that follows each position in its answer (0 where none)
    source: torch.Tensor
    first_token: torch.Tensor  # [answers]: index of (prompt row, first token) in [prompts × vocab]


def pack_answers(answer_ids: torch.Tensor, lengths: list[int], answer_prompt: list[int], prompts: int,
                 vocab: int, pad_id: int) -> PackedAnswers:
    """answer_ids [answers, answer_width] right-padded, `lengths` each answer's tokens, `answer_prompt` its row.

    >>> p = pack_answers(torch.tensor([[7, 8], [9, 0], [5, 6]]), [2, 1, 2], [0, 0, 1], prompts=2, vocab=10, pad_id=0)
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
    first_token = [row * vocab + tokens[answer][0] for answer, row in enumerate(answer_prompt)]
    return PackedAnswers(*(torch.tensor(t, dtype=torch.long) for t in (ids, segment, offset, target, source,
                                                                     first_token)))


def packed_logprobs_and_entropy(model, read: PromptsRead, packed: PackedAnswers) -> tuple[torch.Tensor, torch.Tensor]:
    """The answers run packed on top of the prompts' cache (`read`, one row per prompt). → logprobs, entropy:
    [answers, answer_width], as trainer/grpo.py's `_logprobs_and_entropy` gives them."""
    device = read.next_logits.device
    segment = packed.segment.to(device)  # [prompts, width]
    width = segment.shape[1]
    real = segment >= 0
    same_answer = (segment.unsqueeze(2) == segment.unsqueeze(1)) & real.unsqueeze(2)  # [prompts, width, width]
    causal = torch.ones(width, width, dtype=torch.bool, device=device).tril()
    # a padding position attends to itself alone: a query that sees nothing would give NaN, and 0 · NaN is NaN
    own = same_answer & causal | (~real).unsqueeze(2) & torch.eye(width, dtype=torch.bool, device=device)
    prompt = read.attention_mask.bool().unsqueeze(1) & real.unsqueeze(2)  # [prompts, width, cache_width]
    mask = torch.cat([prompt, own], dim=2).unsqueeze(1)  # [prompts, 1, width, cache_width + width]
    output = model(
        input_ids=packed.ids.to(device),
        attention_mask=mask,
        position_ids=read.next_position.unsqueeze(1) + packed.offset.to(device),
        use_cache=True,
        **{CACHE_FIELD: read.cache},
    )
    positions = torch.log_softmax(output.logits.float(), dim=-1)  # [prompts, width, vocab]
    first = torch.log_softmax(read.next_logits.float(), dim=-1)  # [prompts, vocab]
    scored = positions.gather(-1, packed.target.to(device).unsqueeze(-1)).squeeze(-1)  # [prompts, width]
    first_token = packed.first_token.to(device)  # [answers]
    first_scored = first.flatten().index_select(0, first_token)  # [answers]
    source = packed.source.to(device)
    zero = scored.new_zeros(1)
    logprobs = torch.cat([scored.flatten(), first_scored, zero]).index_select(0, source.flatten()).view(source.shape)
    with torch.no_grad():
        entropy = -(positions.exp() * positions).sum(-1)  # [prompts, width]
        first_entropy = -(first.exp() * first).sum(-1)[first_token // first.shape[1]]  # [answers]
        entropy = torch.cat([entropy.flatten(), first_entropy, zero]).index_select(0, source.flatten())
    return logprobs, entropy.view(source.shape)
