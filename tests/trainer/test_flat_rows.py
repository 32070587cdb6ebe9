"""Rows read as one stream of their real tokens (trainer/flat_rows.py), or with their prefix as row 0
(trainer/prefix_row.py), on a grouped-query model with random weights: the prompts' reading gives each prompt's logits
and cache as the prompt read whole does, and the update's packed pass the plain pass's log-probabilities and
gradient."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from trainer.grpo import (
    answer_logprobs_and_entropy,
    build_batch,
    build_shared_prompt_batch,
    shared_prompt_logprobs_and_entropy,
)
from trainer.prompt_cache import prompt_batch, read_prompts


@pytest.fixture(scope="module")
def grouped():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, pad_token_id=0, attn_implementation="sdpa")
    return LlamaForCausalLM(config).eval()


PREFIX = [5, 6, 7, 8, 9]
RESTS = [[10, 11, 12], [13], [14, 15], [16, 17, 18, 19, 20, 21]]
PROMPTS = [[*PREFIX, *rest] for rest in RESTS]


@pytest.mark.parametrize("prefix", [
    PREFIX,  # no wider than the rests (6 tokens): the prefix as row 0 (trainer/prefix_row.py)
    [*PREFIX, 40, 41, 42, 43, 44],  # wider: the rests as a stream after it, their padding left out
])
def test_the_read_prompts_logits_and_cache_are_each_prompt_read_whole(grouped, prefix):
    prompts = [[*prefix, *rest] for rest in RESTS]
    batch = prompt_batch(prompts, pad_id=0)
    assert batch.prefix.tolist() == prefix  # the prefix, then rests of 1 to 6 tokens
    with torch.no_grad():
        read = read_prompts(grouped, batch)
        for row, prompt in enumerate(prompts):
            whole = grouped(input_ids=torch.tensor([prompt]), use_cache=True)
            torch.testing.assert_close(read.next_logits[row], whole.logits[0, -1], rtol=1e-5, atol=1e-5)
            real = read.attention_mask[row].bool()  # the cache's columns of this prompt's tokens
            assert int(real.sum()) == len(prompt) == int(read.next_position[row])
            for layer, whole_layer in zip(read.cache.layers, whole.past_key_values.layers, strict=True):
                torch.testing.assert_close(layer.keys[row][:, real], whole_layer.keys[0], rtol=1e-5, atol=1e-5)
                torch.testing.assert_close(layer.values[row][:, real], whole_layer.values[0], rtol=1e-5,
                                           atol=1e-5)


def test_the_packed_pass_gives_the_plain_passes_numbers_and_gradient(grouped):
    answers = [[22, 23], [24], [25, 26, 27], [28, 29], [30], [31, 32, 33, 34]]
    owner = [0, 0, 1, 2, 3, 3]
    params = list(grouped.parameters())
    plain = build_batch([PROMPTS[p] for p in owner], answers, pad_id=0)
    plain_logprobs, _ = answer_logprobs_and_entropy(grouped, plain)
    plain_grad = torch.autograd.grad((plain_logprobs * plain.answer_mask).sum(), params)
    packed_logprobs, _ = shared_prompt_logprobs_and_entropy(
        grouped, build_shared_prompt_batch(PROMPTS, answers, owner, pad_id=0))
    packed_grad = torch.autograd.grad((packed_logprobs * plain.answer_mask).sum(), params)
    mask = plain.answer_mask.bool()
    torch.testing.assert_close(packed_logprobs[mask], plain_logprobs[mask], rtol=1e-5, atol=1e-5)
    for packed, whole in zip(packed_grad, plain_grad, strict=True):
        torch.testing.assert_close(packed, whole, rtol=1e-4, atol=1e-5)
