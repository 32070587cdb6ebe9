"""Text to token ids and back, as a run and an evaluation read them: a prompt through the model's chat template,
an answer decoded without its special tokens."""

from __future__ import annotations

from collections.abc import Sequence


def prompt_ids(tokenizer, messages: list[dict]) -> list[int]:
    """The prompt's messages in the chat template, ending where the assistant's answer starts."""
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
    if not isinstance(ids, list):  # transformers 5 returns a dictionary-like encoding
        ids = ids["input_ids"]
    return list(ids)


def answer_text(tokenizer, token_ids: Sequence[int]) -> str:
    """An answer's text, without its end token."""
    return tokenizer.decode(token_ids, skip_special_tokens=True)
