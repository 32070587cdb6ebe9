"""The project's own tiny model: a small Llama with a local character-level tokenizer, warm-started on Math Pairs.

Nothing is downloaded. `build_tiny_model(out, seed)` writes a folder that `AutoModelForCausalLM` and
`AutoTokenizer` load like any hub model, with a ChatML chat template whose end-of-answer token is `<|im_end|>`.
The warm start is a short supervised pass on Math Pairs, stopped early on purpose so that the model answers some
prompts right and some wrong (about 0.3-0.5 greedy accuracy on held-out prompts): GRPO needs groups of answers
that disagree.

Why a Llama model type: a character-level tokenizer saved with a qwen2 model type reloads as a byte-level one that
silently drops spaces and newlines; with Llama it round-trips exactly (tested).
"""

from __future__ import annotations

import json
import logging
import random
import string
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from domain.rewards.math_pairs import math_pairs_problem

log = logging.getLogger(__name__)

# Bump when the recipe changes, so cached builds (tests, CI) are rebuilt.
TINY_MODEL_VERSION = 1

SPECIAL_TOKENS = ("<pad>", "<eos>", "<|im_start|>", "<|im_end|>")
# Every printable ASCII character and the newline: any prompt, the <think>/<answer> format and JSON encode.
ALPHABET = sorted(set(string.printable) - set("\t\r\x0b\x0c"))

# ChatML. The {% generation %} markers render nothing: they tell SFT which tokens are the assistant's (each reply
# and its <|im_end|>), so the loss falls on every assistant turn of a conversation (TRL's assistant_only_loss).
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'assistant' %}<|im_start|>assistant\n"
    "{% generation %}{{ message['content'] }}<|im_end|>{% endgeneration %}{{ '\\n' }}"
    "{% else %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# The same ChatML without the markers, as builds before them saved it: SFT swaps in CHATML_TEMPLATE for it.
PLAIN_CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@dataclass(frozen=True)
class TinyModelRecipe:
    """Sizes and warm-start schedule. 1.8M parameters; the warm start takes about a minute on 2 cores."""

    hidden_size: int = 192
    intermediate_size: int = 512
    layers: int = 4
    heads: int = 4
    warm_start_steps: int = 400
    batch_size: int = 64
    learning_rate: float = 3e-4
    held_out_prompts: int = 128


def math_pairs_rows(seed: int, count: int) -> list[dict]:
    """Training or validation rows of the Math Pairs task in the run spec's shape.

    >>> math_pairs_rows(7, 1)
    [{'prompt': [{'role': 'user', 'content': 'What is 29+60?'}], 'reference': '89'}]
    """
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        question, reference = math_pairs_problem(rng)
        rows.append({"prompt": [{"role": "user", "content": question}], "reference": reference})
    return rows


def build_tokenizer():
    """A character-level fast tokenizer: a BPE model with no merges, so every character is one token."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate([*SPECIAL_TOKENS, *ALPHABET])}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.add_special_tokens(list(SPECIAL_TOKENS))
    core.decoder = decoders.Fuse()  # join characters back without inserting spaces
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        eos_token="<|im_end|>",
        bos_token=None,
        unk_token=None,
        additional_special_tokens=["<eos>", "<|im_start|>"],
    )
    tokenizer.chat_template = CHATML_TEMPLATE
    tokenizer.padding_side = "left"
    return tokenizer


def prompt_ids(tokenizer, messages: list[dict]) -> list[int]:
    """The chat-formatted prompt, ending with the assistant turn's opening, as token ids."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def build_tiny_model(out: str | Path, seed: int = 0, recipe: TinyModelRecipe | None = None) -> dict:
    """Build, warm-start and save the tiny model to `out`; return what the build measured.

    Deterministic from `seed`: the weights, the training problems and the held-out problems all derive from it.
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    recipe = recipe or TinyModelRecipe()
    out = Path(out)
    started = time.monotonic()
    torch.manual_seed(seed)
    tokenizer = build_tokenizer()
    end_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad_id = tokenizer.pad_token_id
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=recipe.hidden_size,
        intermediate_size=recipe.intermediate_size,
        num_hidden_layers=recipe.layers,
        num_attention_heads=recipe.heads,
        num_key_value_heads=recipe.heads,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=end_id,
        pad_token_id=pad_id,
    )
    model = LlamaForCausalLM(config)

    train_rng = random.Random(f"tiny-model-train-{seed}")
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate)
    model.train()
    for step in range(recipe.warm_start_steps):
        batch = [math_pairs_problem(train_rng) for _ in range(recipe.batch_size)]
        input_ids, labels = _supervised_batch(tokenizer, batch, end_id, pad_id)
        loss = model(input_ids=input_ids, attention_mask=(input_ids != pad_id).long(), labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            log.info("warm start step %d: loss %.4f", step, loss.item())

    model.generation_config = GenerationConfig(
        do_sample=False, eos_token_id=end_id, pad_token_id=pad_id, bos_token_id=None
    )
    model.eval()
    held_out = math_pairs_rows(seed + 1_000_003, recipe.held_out_prompts)
    accuracy = greedy_accuracy(model, tokenizer, held_out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    facts = {
        "version": TINY_MODEL_VERSION,
        "seed": seed,
        "recipe": asdict(recipe),
        "parameters": sum(p.numel() for p in model.parameters()),
        "held_out_greedy_accuracy": accuracy,
        "seconds": round(time.monotonic() - started, 1),
    }
    (out / "tiny_model.json").write_text(json.dumps(facts, indent=2))
    return facts


def _supervised_batch(tokenizer, problems: list[tuple[str, str]], end_id: int, pad_id: int):
    """Right-padded prompt+answer sequences; the loss covers the answer and its end token only."""
    import torch

    sequences, label_rows = [], []
    for question, answer in problems:
        prompt = prompt_ids(tokenizer, [{"role": "user", "content": question}])
        target = [*tokenizer(answer, add_special_tokens=False)["input_ids"], end_id]
        sequences.append(prompt + target)
        label_rows.append([-100] * len(prompt) + target)
    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id)  # [batch, tokens]
    labels = torch.full((len(sequences), width), -100)  # [batch, tokens]
    for row, (sequence, label_row) in enumerate(zip(sequences, label_rows, strict=True)):
        input_ids[row, : len(sequence)] = torch.tensor(sequence)
        labels[row, : len(label_row)] = torch.tensor(label_row)
    return input_ids, labels


def greedy_accuracy(model, tokenizer, rows: list[dict], max_new_tokens: int = 8) -> float:
    """Share of rows whose greedy answer equals the reference exactly."""
    import torch

    tokenizer.padding_side = "left"
    texts = [tokenizer.apply_chat_template(r["prompt"], tokenize=False, add_generation_prompt=True) for r in rows]
    encoded = tokenizer(texts, add_special_tokens=False, padding=True, return_tensors="pt")
    with torch.inference_mode():
        output = model.generate(**encoded, max_new_tokens=max_new_tokens, do_sample=False)
    answers = tokenizer.batch_decode(output[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True)
    right = sum(a.strip() == r["reference"] for a, r in zip(answers, rows, strict=True))
    return right / len(rows)
