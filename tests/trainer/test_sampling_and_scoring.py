"""Sampling and scoring on the tiny model: greedy answers match Transformers' generate, cut-off answers score 0
without being graded, and the shared-prompt forward pass gives the plain one's numbers and gradient."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from trainer.attention_swap import attends_with_sdpa
from trainer.grpo import (
    answer_logprobs_and_entropy,
    build_batch,
    build_shared_prompt_batch,
    shared_prompt_logprobs_and_entropy,
)
from trainer.sampling import SampledAnswer, TransformersBackend
from trainer.scoring import score_answers
from trainer.tiny_model import math_pairs_rows


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_model_dir),
        LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM"),
    )
    rows = math_pairs_rows(seed=5, count=12)
    prompts = [
        list(tokenizer.apply_chat_template(r["prompt"], tokenize=True, add_generation_prompt=True)["input_ids"])
        for r in rows
    ]
    end_ids = {tokenizer.convert_tokens_to_ids("<|im_end|>")}
    backend = TransformersBackend(model, tokenizer.pad_token_id, end_ids, torch.device("cpu"), seed=0)
    return tokenizer, model, rows, prompts, end_ids, backend


def test_greedy_answers_are_those_of_transformers_generate(tiny):
    tokenizer, model, rows, prompts, end_ids, backend = tiny
    ours = backend.sample(prompts, 1, 8, True, lambda: False)
    texts = [tokenizer.apply_chat_template(r["prompt"], tokenize=False, add_generation_prompt=True) for r in rows]
    encoded = tokenizer(texts, add_special_tokens=False, padding=True, return_tensors="pt")
    with torch.inference_mode():
        output = model.generate(**encoded, max_new_tokens=8, do_sample=False, eos_token_id=sorted(end_ids),
                                pad_token_id=tokenizer.pad_token_id)
    reference = tokenizer.batch_decode(output[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True)
    assert [tokenizer.decode(a[0].token_ids, skip_special_tokens=True) for a in ours] == reference


def test_an_answer_that_reaches_the_longest_length_is_cut_off(tiny):
    _, _, _, prompts, _, backend = tiny
    answers = backend.sample(prompts[:2], 4, 1, False, lambda: False)  # one token: no room for the end token
    assert all(a.cut_off and len(a.token_ids) == 1 for group in answers for a in group)


def test_a_cut_off_answer_scores_zero_without_being_graded(tiny, final_number_grader):
    tokenizer = tiny[0]
    right = tokenizer("85", add_special_tokens=False)["input_ids"]
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    answers = [[SampledAnswer([*right, end], cut_off=False), SampledAnswer(right, cut_off=True)]]
    scored = score_answers(tokenizer, final_number_grader, answers, ["85"])
    assert scored.rewards.tolist() == [[1.0, 0.0]]
    assert scored.graded == 1


@pytest.mark.parametrize("chosen", [
    "four prompts",  # the shared prefix, then the rows' real tokens, in one stream (trainer/flat_rows.py)
    "one prompt, so no shared prefix",
    "prompts of unlike lengths",  # rows of unlike widths: padding that the stream leaves out
    "a shared prefix wider than the rows",
])
def test_the_shared_prompt_forward_gives_the_plain_forwards_numbers_and_gradient(tiny, chosen):
    _, model, _, prompts, _, backend = tiny
    prompts = {"four prompts": prompts[:4], "one prompt, so no shared prefix": prompts[:1],
               "prompts of unlike lengths": [prompts[0], prompts[1][:20], prompts[2][:26]],
               "a shared prefix wider than the rows": [p[:14] + [7] * 60 + p[14:] for p in prompts[:3]]}[chosen]
    assert attends_with_sdpa(model)  # the packed pass (trainer/packed_answers.py) is what this checks
    answers = backend.sample(prompts, 3, 6, False, lambda: False)
    tokens = [a.token_ids for group in answers for a in group]
    owner = [p for p, group in enumerate(answers) for _ in group]
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]

    plain = build_batch([prompts[p] for p in owner], tokens, pad_id=0)
    plain_logprobs, plain_entropy = answer_logprobs_and_entropy(model, plain)
    plain_grad = torch.autograd.grad((plain_logprobs * plain.answer_mask).sum(), params)

    shared = build_shared_prompt_batch(prompts, tokens, owner, pad_id=0)
    calls = []
    hook = model.get_base_model().register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        shared_logprobs, shared_entropy = shared_prompt_logprobs_and_entropy(model, shared)
    finally:
        hook.remove()
    assert len(calls) == 1
    shared_grad = torch.autograd.grad((shared_logprobs * shared.answer_mask).sum(), params)

    mask = plain.answer_mask.bool()
    assert torch.allclose(plain_logprobs[mask], shared_logprobs[mask], atol=1e-5)
    assert torch.allclose(plain_entropy[mask], shared_entropy[mask], atol=1e-5)
    for a, b in zip(plain_grad, shared_grad, strict=True):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)
