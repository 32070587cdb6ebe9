"""The static-cache decode loop (trainer/static_decode.py), the Transformers backend's GPU path, run on the CPU
without graph capture: the same greedy answers as the dynamic loop, sampled answers from the same distribution,
answers that end at end tokens and cut-offs marked as the dynamic loop marks them."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from transformers import AutoModelForCausalLM, Qwen2Config

from trainer.sampling import SamplingInterrupted, TransformersBackend, default_decode
from trainer.static_decode import MAX_ROWS, next_tokens, row_bytes


def sampler(adapted, decode: str, seed: int = 0, rows: int | None = None) -> TransformersBackend:
    tokenizer, model, _, end_ids = adapted
    return TransformersBackend(model, tokenizer.pad_token_id, end_ids, torch.device("cpu"), seed=seed,
                               max_sequences_per_batch=rows, decode=decode)  # type: ignore[arg-type]


def answers(groups) -> list[list[tuple[list[int], bool]]]:
    return [[(answer.token_ids, answer.cut_off) for answer in group] for group in groups]


def test_the_decode_loop_is_chosen_by_device(adapted):
    model = adapted[1]
    assert default_decode(model, torch.device("cpu")) == "dynamic"
    assert default_decode(model, torch.device("cuda")) == "graphs"


def test_static_greedy_answers_are_the_dynamic_loops_with_an_adapter_that_counts(adapted, tiny_model_dir):
    prompts = adapted[2]
    dynamic = answers(sampler(adapted, "dynamic").sample(prompts, 1, 12, True, lambda: False))
    static = answers(sampler(adapted, "static").sample(prompts, 1, 12, True, lambda: False))
    assert static == dynamic
    assert all(not cut_off and ids[-1] in adapted[3] for group in static for ids, cut_off in group)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    without_adapter = TransformersBackend(base, adapted[0].pad_token_id, adapted[3], torch.device("cpu"), seed=0,
                                          decode="static")
    assert answers(without_adapter.sample(prompts, 1, 12, True, lambda: False)) != static  # the adapter counts


def test_answers_cut_off_at_the_longest_length_are_marked_as_the_dynamic_loop_marks_them(adapted):
    prompts = adapted[2][:8]
    dynamic = answers(sampler(adapted, "dynamic", seed=4).sample(prompts, 4, 3, False, lambda: False))
    static = answers(sampler(adapted, "static", seed=4).sample(prompts, 4, 3, False, lambda: False))
    for group in dynamic + static:
        for ids, cut_off in group:
            assert cut_off == (len(ids) == 3 and ids[-1] not in adapted[3])
            assert all(token not in adapted[3] for token in ids[:-1])  # an answer ends at its first end token
    assert any(cut_off for group in static for _, cut_off in group)


def test_static_sampled_answers_have_the_dynamic_loops_token_frequencies(adapted):
    """16 prompts x 64 answers each way (about 3,400 tokens): the total variation distance between the two loops'
    token frequencies, at each answer position and overall, stays under 0.06 (two samples of one distribution
    differ by ~0.02 at this size; an unmerged adapter, a temperature off by 20% or a skipped draw give 0.1+)."""
    prompts = adapted[2][:16]
    dynamic = answers(sampler(adapted, "dynamic", seed=7).sample(prompts, 64, 8, False, lambda: False))
    static = answers(sampler(adapted, "static", seed=7, rows=512).sample(prompts, 64, 8, False, lambda: False))

    def frequencies(groups, position: int | None) -> Counter:
        if position is None:
            return Counter(token for group in groups for ids, _ in group for token in ids)
        return Counter(ids[position] for group in groups for ids, _ in group if len(ids) > position)

    for position in (None, 0, 1, 2):
        a, b = frequencies(dynamic, position), frequencies(static, position)
        total_a, total_b = sum(a.values()), sum(b.values())
        distance = 0.5 * sum(abs(a[t] / total_a - b[t] / total_b) for t in set(a) | set(b))
        assert distance < 0.06, (position, distance)
    assert static != dynamic  # another way of drawing: same distribution, other draws


def test_the_exponential_race_draws_each_token_with_its_probability():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, -30.0]]).repeat(20_000, 1)  # [rows, vocab]
    drawn = next_tokens(logits, greedy=False, generator=torch.Generator().manual_seed(0))
    frequencies = torch.bincount(drawn, minlength=5).float() / len(drawn)
    assert torch.allclose(frequencies, torch.softmax(logits[0], dim=-1), atol=0.01)
    assert next_tokens(logits[:2], greedy=True, generator=torch.Generator()).tolist() == [0, 0]


def test_the_time_limit_stops_the_static_loop(adapted):
    calls = iter(range(100))
    with pytest.raises(SamplingInterrupted):
        sampler(adapted, "static").sample(adapted[2][:4], 2, 8, False, lambda: next(calls) >= 2)


def test_a_gpu_batch_is_sized_to_a_rows_cache_and_logits():
    config = Qwen2Config(vocab_size=151_936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                         num_attention_heads=14, num_key_value_heads=2)
    per_row = row_bytes(config, 128 + 256, torch.bfloat16)
    cache = 2 * 24 * 2 * 64 * (384 + 384) * 2  # keys and values, 384 columns, the prompt part counted twice at most
    assert cache < per_row < cache + 151_936 * 14 + 50_000  # + logits and sampling buffers, + a step's activations
    assert 60e9 * 0.7 / per_row > MAX_ROWS  # a big GPU holds more rows than the cap


def test_a_graph_capture_that_fails_leaves_sampling_to_the_dynamic_loop(adapted, monkeypatch):
    """A compiler that fails on the machine (here torch.compile replaced by one that fails at the first call: a
    failing inductor cannot be brought about on purpose) costs speed, not the run."""

    def failing_compile(step, **options):
        def compiled(*args, **kwargs):
            raise RuntimeError("inductor: no C++ compiler")
        return compiled

    monkeypatch.setattr(torch, "compile", failing_compile)
    prompts = adapted[2][:8]
    captured = sampler(adapted, "graphs")
    fell_back = answers(captured.sample(prompts, 1, 12, True, lambda: False))
    assert captured.decode == "dynamic"
    assert fell_back == answers(sampler(adapted, "dynamic").sample(prompts, 1, 12, True, lambda: False))
