"""The tiny model: built locally, reloads through the Auto classes, keeps spaces, answers some prompts right."""

from __future__ import annotations

import json

from transformers import AutoModelForCausalLM, AutoTokenizer

from trainer.tiny_model import greedy_accuracy, math_pairs_rows


def test_the_tokenizer_round_trips_any_printable_text_after_reloading(tiny_model_dir):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    text = 'Spaces  and\nnewlines: {"a": [1, 2]} <think>3+4</think><answer>7</answer> ~`|\\'
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert len(ids) == len(text)  # one token per character
    assert tokenizer.decode(ids) == text


def test_the_chat_template_is_chatml_and_the_answer_ends_with_im_end(tiny_model_dir):
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "What is 2+3?"}], tokenize=False, add_generation_prompt=True
    )
    assert prompt == "<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n"
    assert tokenizer.eos_token == "<|im_end|>"
    assert {"<pad>", "<eos>", "<|im_start|>", "<|im_end|>"} <= set(tokenizer.get_vocab())


def test_the_warm_start_leaves_room_to_learn(tiny_model_dir):
    facts = json.loads((tiny_model_dir / "tiny_model.json").read_text())
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    accuracy = greedy_accuracy(model, tokenizer, math_pairs_rows(seed=1_000_003, count=128))
    assert accuracy == facts["held_out_greedy_accuracy"]  # deterministic, and the saved model is the built one
    assert 0.2 <= accuracy <= 0.7  # some right, some wrong: GRPO has groups that disagree
