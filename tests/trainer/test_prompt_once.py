"""Decode steps that read each prompt's cache once for all its answers (trainer/prompt_once.py) attend as the plain
attention over a copy of the prompt per answer does, and sampling with them answers as sampling without them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward

import trainer.sampling
from trainer.prompt_once import ATTENTION, PromptOnceCache, prompt_once_attention
from trainer.sampling import TransformersBackend


def attention_case(heads: int, kv_heads: int, prompt_of: list[int], answer_columns: int = 3, seed: int = 0):
    """Random prompts' and answers' keys and values, left-padded prompts, queries of one token: → (module, query,
    answer keys, answer values, mask, cache)."""
    generator = torch.Generator().manual_seed(seed)
    prompts, prompt_columns, head_dim = max(prompt_of) + 1, 7, 8
    layer = SimpleNamespace(
        keys=torch.randn(prompts, kv_heads, prompt_columns, head_dim, generator=generator),
        values=torch.randn(prompts, kv_heads, prompt_columns, head_dim, generator=generator),
    )
    cache = PromptOnceCache(SimpleNamespace(layers=[layer]), torch.tensor(prompt_of))
    answers = len(prompt_of)
    query = torch.randn(answers, heads, 1, head_dim, generator=generator)
    keys = torch.randn(answers, kv_heads, answer_columns, head_dim, generator=generator)
    values = torch.randn(answers, kv_heads, answer_columns, head_dim, generator=generator)
    padding = torch.arange(prompt_columns) < torch.tensor(prompt_of).unsqueeze(1) % 3  # [answers, prompt_columns]
    mask = torch.cat([~padding, torch.ones(answers, answer_columns, dtype=torch.bool)], dim=1)[:, None, None, :]
    module = SimpleNamespace(layer_idx=0, num_key_value_groups=heads // kv_heads)
    return module, query, keys, values, mask, cache


def plain_attention(module, query, keys, values, mask, cache, **kwargs):
    """SDPA over each answer's own copy of its prompt's keys and values, joined to its own."""
    prompt_of = cache.prompt_of
    whole_keys = torch.cat([cache.prompt_keys_across[0].transpose(2, 3)[prompt_of], keys], dim=2)
    whole_values = torch.cat([cache.prompt_values[0][prompt_of], values], dim=2)
    return sdpa_attention_forward(module, query, whole_keys, whole_values, mask, scaling=0.3, **kwargs)[0]


@pytest.mark.parametrize(("heads", "kv_heads", "prompt_of"), [
    (4, 4, [0, 0, 0, 1, 2, 2, 3]),  # prompts answered 3, 1, 2 and 1 times
    (4, 2, [0, 1, 1, 1, 1, 2]),  # two query heads per key head (grouped-query attention)
    (6, 1, [1, 1, 3]),  # prompts 0 and 2 have no answer left
])
def test_the_attention_over_each_prompt_once_is_the_attention_over_its_copies(heads, kv_heads, prompt_of):
    module, query, keys, values, mask, cache = attention_case(heads, kv_heads, prompt_of)
    once, _ = prompt_once_attention(module, query, keys, values, mask, scaling=0.3, prompt_once=cache)
    plain = plain_attention(module, query, keys, values, mask, cache)
    assert once.shape == plain.shape == (len(prompt_of), 1, heads, 8)
    torch.testing.assert_close(once, plain, rtol=1e-5, atol=1e-6)
    # what a query sees of its prompt counts: another prompt's keys give another attention
    cache.prompt_keys_across[0] = cache.prompt_keys_across[0].roll(1, dims=0)
    moved, _ = prompt_once_attention(module, query, keys, values, mask, scaling=0.3, prompt_once=cache)
    assert not torch.allclose(moved, plain, atol=1e-3)


def test_keeping_answers_keeps_their_prompts_and_their_own_keys():
    module, query, keys, values, mask, cache = attention_case(4, 2, [0, 0, 1, 1, 1, 2])
    cache.update(keys[:, :, :2], values[:, :, :2], 0)  # the answers' own keys, as decode steps store them
    kept = torch.tensor([1, 3, 5])
    cache.keep(kept)
    assert cache.prompt_of.tolist() == [0, 1, 2]
    own_keys, own_values = cache.update(keys[kept][:, :, 2:], values[kept][:, :, 2:], 0)
    assert cache.get_seq_length() == 7 + 3
    once, _ = prompt_once_attention(module, query[kept], own_keys, own_values, mask[kept], scaling=0.3,
                                    prompt_once=cache)
    plain = plain_attention(module, query[kept], keys[kept], values[kept], mask[kept], cache)
    torch.testing.assert_close(once, plain, rtol=1e-5, atol=1e-6)


def test_the_answers_keys_grow_in_place_past_their_buffers_first_width():
    _, _, keys, values, _, cache = attention_case(4, 2, [0, 0, 1], answer_columns=40)
    for column in range(40):  # one column a step, as the decode writes them
        own_keys, own_values = cache.update(keys[:, :, column : column + 1], values[:, :, column : column + 1], 0)
    assert torch.equal(own_keys, keys) and torch.equal(own_values, values)
    assert cache.answer_keys[0].shape[0] == 64  # 16 columns, then doubled past 16 and 32 columns written


def test_what_the_grouped_attention_does_not_handle_goes_to_sdpa_over_the_joined_keys():
    module, query, keys, values, mask, cache = attention_case(4, 4, [0, 0, 1])
    once, _ = prompt_once_attention(module, query, keys, values, mask, scaling=0.3, prompt_once=cache,
                                    sliding_window=4096)
    torch.testing.assert_close(once, plain_attention(module, query, keys, values, mask, cache), rtol=1e-5, atol=1e-6)


@pytest.fixture
def counted_attention():
    """prompt_once_attention, counting its calls for the duration of a test."""
    calls = []

    def counting(*args, **kwargs):
        calls.append(1)
        return prompt_once_attention(*args, **kwargs)

    AttentionInterface.register(ATTENTION, counting)
    yield calls
    AttentionInterface.register(ATTENTION, prompt_once_attention)


def sampled(adapted, greedy: bool, answers: int, seed: int = 0) -> list[list[list[int]]]:
    tokenizer, model, prompts, end_ids = adapted
    backend = TransformersBackend(model, tokenizer.pad_token_id, end_ids, torch.device("cpu"), seed=seed)
    groups = backend.sample(prompts[:16], answers, 12, greedy, lambda: False)
    return [[answer.token_ids for answer in group] for group in groups]


def test_sampling_with_each_prompt_read_once_answers_as_sampling_with_copies(adapted, counted_attention,
                                                                               monkeypatch):
    greedy, drawn = sampled(adapted, True, 1), sampled(adapted, False, 8, seed=7)
    assert counted_attention  # the decode steps took the prompt-once attention
    monkeypatch.setattr(trainer.sampling, "decodes_prompt_once", lambda model: False)
    calls = len(counted_attention)
    assert sampled(adapted, True, 1) == greedy
    plain = sampled(adapted, False, 8, seed=7)
    assert len(counted_attention) == calls  # and the plain decode did not
    same = sum(a == b for ga, gb in zip(drawn, plain, strict=True) for a, b in zip(ga, gb, strict=True))
    # the probabilities differ by float rounding only, so a draw may differ only where it falls on a boundary
    assert same >= 0.98 * 16 * 8
    assert adapted[1].config._attn_implementation == "sdpa"  # the model's own attention is back after sampling
