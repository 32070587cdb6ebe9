"""Head: SFT's data and loss on a LoRA adapter of the output head alone, trained with transformers' Trainer.

TRL's SFTTrainer computes its loss from `lm_head.weight` directly (a fused head that never builds the logits), so it
refuses an adapter on the head, which it would never train. Head's loss is the model's own instead: the forward pass
through the adapted head, cross-entropy on the assistant's tokens as SFT marks them (the same chat template, the
same assistant-only loss). Every layer below the head is frozen and nothing below it needs a gradient, so the
backward pass stops at the head: a step costs little more than a forward pass.
"""

from __future__ import annotations

from typing import Any

import torch

from trainer.sft import assistant_turns_template
from trainer.tune_spec import TuneRow, TuneSpec

IGNORED = -100  # the label of a token the loss skips (the prompt, the padding)


def tokenized_rows(tokenizer, rows: list[TuneRow], max_length: int) -> list[dict[str, list[int]]]:
    """Each row's conversation as input ids, with labels on the assistant's tokens only; a row the Training window
    leaves no assistant token of is dropped, as SFT drops it.

    Where the chat template marks no assistant turns, the labels fall on the last reply (SFT's fallback)."""
    template = assistant_turns_template(tokenizer)
    examples = []
    for row in rows:
        messages = [*(dict(m) for m in row.prompt), {"role": "assistant", "content": row.reference}]
        if template is not None:
            encoded = tokenizer.apply_chat_template(
                messages, chat_template=template, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
            )
            ids, mask = list(encoded["input_ids"]), list(encoded["assistant_masks"])
        else:
            prompt = tokenizer.apply_chat_template(
                messages[:-1], tokenize=True, return_dict=True, add_generation_prompt=True
            )["input_ids"]
            ids = list(tokenizer.apply_chat_template(messages, tokenize=True, return_dict=True)["input_ids"])
            mask = [0] * len(prompt) + [1] * (len(ids) - len(prompt))
        ids, mask = ids[:max_length], mask[:max_length]
        if any(mask):
            examples.append({"input_ids": ids, "labels": [t if m else IGNORED for t, m in zip(ids, mask, strict=True)]})
    return examples


def padded_batch(pad_id: int):
    """The collator: examples padded on the right to the longest, the padding masked out of attention and loss."""

    def collate(examples: list[dict[str, list[int]]]) -> dict[str, torch.Tensor]:
        width = max(len(example["input_ids"]) for example in examples)
        input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)  # [examples, tokens]
        labels = torch.full((len(examples), width), IGNORED, dtype=torch.long)  # [examples, tokens]
        attention_mask = torch.zeros((len(examples), width), dtype=torch.long)  # [examples, tokens]
        for i, example in enumerate(examples):
            length = len(example["input_ids"])
            input_ids[i, :length] = torch.tensor(example["input_ids"])
            labels[i, :length] = torch.tensor(example["labels"])
            attention_mask[i, :length] = 1
        return {"input_ids": input_ids, "labels": labels, "attention_mask": attention_mask}

    return collate


def build_head_trainer(spec: TuneSpec, model, tokenizer, train_rows, validation_rows, args: dict, callbacks):
    from transformers import Trainer, TrainingArguments

    settings: dict[str, Any] = {key: value for key, value in args.items() if key != "max_length"}  # TRL's, not HF's
    config = TrainingArguments(
        **settings, label_names=["labels"], remove_unused_columns=False, prediction_loss_only=True
    )
    return Trainer(
        model=model,
        args=config,
        train_dataset=tokenized_rows(tokenizer, train_rows, spec.training_window),
        eval_dataset=tokenized_rows(tokenizer, validation_rows, spec.training_window),
        data_collator=padded_batch(tokenizer.pad_token_id),
        processing_class=tokenizer,
        callbacks=callbacks,
    )
