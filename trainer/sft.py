"""SFT with TRL's SFTTrainer on the whole conversation, the loss on every assistant turn (TRL's assistant-only loss).

TRL finds the assistant's tokens through `{% generation %}` markers in the chat template. Where the model's template
has none and TRL knows no training form of it, SFT falls back to a prompt (the conversation before the last reply)
and a completion (that reply), so the loss falls on the last assistant turn only, and says so in the log.
"""

from __future__ import annotations

import logging
from typing import Any

from trainer.tiny_model import CHATML_TEMPLATE, PLAIN_CHATML_TEMPLATE
from trainer.tune_spec import TuneRow, TuneSpec

log = logging.getLogger(__name__)


def conversation_records(rows: list[TuneRow]) -> list[dict[str, Any]]:
    """
    >>> conversation_records([TuneRow([{"role": "user", "content": "2+3?"}], "5")])[0]["messages"][-1]
    {'role': 'assistant', 'content': '5'}
    """
    return [{"messages": [*(dict(m) for m in row.prompt), {"role": "assistant", "content": row.reference}]}
            for row in rows]


def last_reply_records(rows: list[TuneRow]) -> list[dict[str, Any]]:
    """
    >>> last_reply_records([TuneRow([{"role": "user", "content": "2+3?"}], "5")])[0]["completion"]
    [{'role': 'assistant', 'content': '5'}]
    """
    return [
        {"prompt": [dict(m) for m in row.prompt], "completion": [{"role": "assistant", "content": row.reference}]}
        for row in rows
    ]


def assistant_turns_template(tokenizer) -> str | None:
    """A chat template that marks the assistant's turns, or None where there is none to be had."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    template = tokenizer.chat_template
    if not isinstance(template, str | dict) or not template:
        return None
    if has_generation_markers(template):
        return template if isinstance(template, str) else template["default"]
    if template == PLAIN_CHATML_TEMPLATE:  # the tiny model as builds before the markers saved it
        return CHATML_TEMPLATE
    try:
        return get_training_chat_template(tokenizer)
    except ValueError:  # TRL knows no training form of this template
        return None


def build_sft_trainer(spec: TuneSpec, model, tokenizer, train_rows, validation_rows, args: dict, callbacks):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    template = assistant_turns_template(tokenizer)
    if template is not None:
        tokenizer.chat_template = template  # renders the same text; only the assistant mask is new
        config = SFTConfig(**args, assistant_only_loss=True, packing=False, dataset_num_proc=None)
        records = conversation_records
    else:
        log.warning("The model's chat template marks no assistant turns: SFT learns the last reply of each example.")
        config = SFTConfig(**args, completion_only_loss=True, packing=False, dataset_num_proc=None)
        records = last_reply_records
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(records(train_rows)),
        eval_dataset=Dataset.from_list(records(validation_rows)),
        processing_class=tokenizer,
        callbacks=callbacks,
    )
