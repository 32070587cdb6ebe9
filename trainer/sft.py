"""SFT with TRL's SFTTrainer: each example is the conversation before the reply (prompt) and the assistant's
reply (completion), so the loss falls on the assistant's turn only (TRL's completion-only loss)."""

from __future__ import annotations

from typing import Any

from trainer.tune_spec import TuneRow, TuneSpec


def sft_records(rows: list[TuneRow]) -> list[dict[str, Any]]:
    """>>> sft_records([TuneRow([{"role": "user", "content": "2+3?"}], "5")])[0]["completion"]
    [{'role': 'assistant', 'content': '5'}]"""
    return [
        {"prompt": [dict(m) for m in row.prompt], "completion": [{"role": "assistant", "content": row.reference}]}
        for row in rows
    ]


def build_sft_trainer(spec: TuneSpec, model, tokenizer, train_rows, validation_rows, args: dict, callbacks):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(**args, completion_only_loss=True, packing=False, dataset_num_proc=None)
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(sft_records(train_rows)),
        eval_dataset=Dataset.from_list(sft_records(validation_rows)),
        processing_class=tokenizer,
        callbacks=callbacks,
    )
