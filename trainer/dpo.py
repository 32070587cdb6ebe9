"""DPO with TRL's DPOTrainer: the shared prompt, the chosen answer (the reference) and the rejected one. The
reference model is the policy with its adapter switched off (TRL does this for a PEFT model), so no second copy
of the model is loaded."""

from __future__ import annotations

from typing import Any

from trainer.tune_spec import TuneRow, TuneSpec


def dpo_records(rows: list[TuneRow]) -> list[dict[str, Any]]:
    return [
        {
            "prompt": [dict(m) for m in row.prompt],
            "chosen": [{"role": "assistant", "content": row.reference}],
            "rejected": [{"role": "assistant", "content": row.rejected or ""}],
        }
        for row in rows
    ]


def build_dpo_trainer(spec: TuneSpec, model, tokenizer, train_rows, validation_rows, args: dict, callbacks):
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    config = DPOConfig(**args, beta=spec.beta)
    validation = [row for row in validation_rows if row.rejected is not None] or None
    return DPOTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(dpo_records(train_rows)),
        eval_dataset=Dataset.from_list(dpo_records(validation)) if validation else None,
        processing_class=tokenizer,
        callbacks=callbacks,
    )
