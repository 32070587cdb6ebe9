"""SFT learns every assistant turn of a conversation, not only the last reply, and none of the user's words."""

from __future__ import annotations

import pytest
from trainer_specs import tune_settings

from trainer.model_loading import load_tokenizer
from trainer.sft import build_sft_trainer
from trainer.tiny_model import PLAIN_CHATML_TEMPLATE
from trainer.tune_spec import TuneSpec
from trainer.tuning import common_args

CONVERSATION = {
    "prompt": [
        {"role": "user", "content": "What is 2+3?"},
        {"role": "assistant", "content": "5"},
        {"role": "user", "content": "And 4+4?"},
    ],
    "reference": "8",
}


def trained_text(tiny_model_dir, tmp_path, template: str | None) -> str:
    """The characters SFT puts the loss on, for the conversation above (the tiny tokenizer: a token a character)."""
    from transformers import AutoModelForCausalLM

    spec = TuneSpec.from_dict({
        "run_id": "sft-turns", "objective": "sft", "model": {"path_or_id": str(tiny_model_dir)},
        "train_rows": [CONVERSATION], "validation_rows": [CONVERSATION], "storage": {"location": str(tmp_path)},
        "deadline": 4_102_444_800,
        **tune_settings(1, objective="sft", epochs=1, batch_size=1, micro_batch_size=1, training_window=128),
    })
    tokenizer = load_tokenizer(spec)
    if template is not None:
        tokenizer.chat_template = template  # a build saved before the template had its markers
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    trainer = build_sft_trainer(spec, model, tokenizer, spec.train_rows, spec.validation_rows,
                                common_args(spec, str(tmp_path / "out"), 1), [])
    [example] = list(trainer.train_dataset)
    return "".join(tokenizer.decode([label]) for label in example["labels"] if label != -100)  # -100: no loss


@pytest.mark.parametrize("template", [None, PLAIN_CHATML_TEMPLATE], ids=["as built", "saved without markers"])
def test_the_loss_falls_on_both_assistant_replies_and_their_ends(tiny_model_dir, tmp_path, template):
    assert trained_text(tiny_model_dir, tmp_path, template) == "5<|im_end|>8<|im_end|>"
