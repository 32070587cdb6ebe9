"""The decode step run as its bare operations (trainer/lean_step.py) gives transformers' step's logits,
and is taken only where the model is Llama's own code with plain projections."""

from __future__ import annotations

import torch

from trainer.attention_swap import attention_as
from trainer.kv_cache import CACHE_FIELD
from trainer.lean_step import LeanStep
from trainer.merged_adapter import MergedAdapter
from trainer.prompt_cache import prompt_batch, read_prompts
from trainer.prompt_once import ATTENTION, PromptOnceCache


def decode(adapted, lean: LeanStep | None, steps: int = 4) -> list[torch.Tensor]:
    """Each step's logits for 3 answers to each of 6 prompts, fed the likeliest token."""
    tokenizer, model, prompts, _ = adapted
    read = read_prompts(model, prompt_batch(prompts[:6], tokenizer.pad_token_id))
    copy_of = torch.arange(6).repeat_interleave(3)
    cache = PromptOnceCache(read.cache, copy_of)
    mask = read.attention_mask[copy_of].bool()
    positions = read.next_position[copy_of]
    logits, seen = read.next_logits[copy_of], []
    for _ in range(steps):
        tokens = logits.argmax(-1)
        mask = torch.cat([mask, torch.ones(len(copy_of), 1, dtype=torch.bool)], dim=1)
        if lean is not None:
            logits = lean(tokens, mask[:, None, None, :], positions, cache)
        else:
            with attention_as(model, ATTENTION):
                logits = model(input_ids=tokens.unsqueeze(1), attention_mask=mask[:, None, None, :],
                               position_ids=positions.unsqueeze(1), prompt_once=cache, use_cache=True,
                               **{CACHE_FIELD: cache}).logits[:, -1, :]
        positions = positions + 1
        seen.append(logits)
    return seen


def test_the_lean_step_gives_transformers_logits_bit_for_bit(adapted):
    model = adapted[1]
    lean = LeanStep.of(model)
    assert lean is not None
    assert not lean.fits()  # peft's LoRA layers: the step goes through transformers
    with MergedAdapter(model).merged(), torch.inference_mode():
        assert lean.fits()
        ours, theirs = decode(adapted, lean), decode(adapted, None)
    for a, b in zip(ours, theirs, strict=True):  # the same operations on the same weights: equal (bit for bit on
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)  # this machine; a blas may block a product otherwise)
    assert len({str(t.argmax(-1).tolist()) for t in ours}) > 1  # the steps fed on: not one token repeated


def test_a_model_with_a_part_of_its_own_has_no_lean_step(adapted):
    model = adapted[1]
    attention = model.get_base_model().model.layers[1].self_attn
    attention.forward = attention.forward  # an instance's own forward: not Llama's code
    try:
        assert LeanStep.of(model) is None
    finally:
        del attention.forward
    assert LeanStep.of(model) is not None
