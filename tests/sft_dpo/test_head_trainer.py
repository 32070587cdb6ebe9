"""Head in the trainer on the tiny model: a handful of Math Pairs conversations train a LoRA on the output head
alone, through the path an SFT run takes (a spec, run_tuning, step records, the adapter kept with its checksum).

The tiny model ties its output head to its input embedding (one tensor): only the head's adapter may change, the
embedding and every other weight stay as they were, and Merge model gives the head its own copy before it adds the
update. RL Starts from a Head run's adapter with the head kept and every linear layer trained besides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from peft import PeftModel
from safetensors.torch import load_file
from trainer_specs import rl_settings, split_settings, tune_settings
from transformers import AutoModelForCausalLM, AutoTokenizer

from trainer.head import build_head_trainer, padded_batch, tokenized_rows
from trainer.loop import run
from trainer.merge import MergeSpec, merge_into_checkpoint
from trainer.model_loading import load_policy, load_tokenizer
from trainer.spec import RunSpec
from trainer.storage import file_sha256
from trainer.tiny_model import math_pairs_rows
from trainer.tune_spec import TuneRow, TuneSpec
from trainer.tuning import TRL_LEAVES_HEAD_OUT, run_tuning, trainer_builder

pytestmark = pytest.mark.slow
NO_LIMIT = 4_102_444_800
HEAD_ADAPTER = {"base_model.model.lm_head.lora_A.weight", "base_model.model.lm_head.lora_B.weight"}


def head_spec(model_dir: Path, storage: Path, **settings) -> TuneSpec:
    named, spec_only = split_settings({"objective": "head", "epochs": 3, "batch_size": 16, "micro_batch_size": 16,
                                       "training_window": 128, "learning_rate": 1e-3, **settings})
    train_rows = math_pairs_rows(seed=41, count=48)
    return TuneSpec.from_dict({
        "run_id": "head-1", "objective": named["objective"], "model": {"path_or_id": str(model_dir)},
        "train_rows": train_rows, "validation_rows": math_pairs_rows(seed=42, count=16),
        "storage": {"location": str(storage)}, "deadline": NO_LIMIT, **tune_settings(len(train_rows), **named),
        **spec_only,
    })


def validation_loss(model, tokenizer, rows: list[TuneRow]) -> float:
    """The loss Head trains and validates on, of `model` on `rows` (the base model: before any step)."""
    tokenizer.padding_side = "right"
    batch = padded_batch(tokenizer.pad_token_id)(tokenized_rows(tokenizer, rows, 128))
    with torch.no_grad():
        return float(model(**batch).loss)


@pytest.fixture(scope="module")
def head_run(tiny_model_dir, tmp_path_factory):
    """One Head run, its records, and the model's weights just before and just after training."""
    storage = tmp_path_factory.mktemp("storage")
    spec = head_spec(tiny_model_dir, storage)
    seen: dict = {}

    def watching(spec, model, *rest):  # the builder run_from_file picks, watched
        seen["model"] = model
        seen["before"] = {name: value.detach().clone() for name, value in model.named_parameters()}
        seen["trainable"] = {name for name, value in model.named_parameters() if value.requires_grad}
        return build_head_trainer(spec, model, *rest)

    records: list = []
    assert trainer_builder("head") is build_head_trainer
    succeeded = run_tuning(spec, watching, records.append)
    return spec, storage, records, succeeded, seen


def test_a_head_run_trains_steps_and_keeps_its_adapter_with_its_checksum(head_run, tiny_model_dir):
    _, storage, records, succeeded, _ = head_run
    assert succeeded, records[-1]
    assert [r.type for r in records][-2:] == ["adapter_saved", "completed"]
    steps = [r for r in records if r.type == "step_logged"]
    assert [s.step for s in steps] == list(range(1, 10))  # 48 conversations / 16 a step, 3 epochs
    saved = next(r for r in records if r.type == "adapter_saved")
    folder = storage / "runs" / "head-1" / "adapter"
    weights = folder / "adapter_model.safetensors"
    assert saved.location == str(folder) and saved.best_round == 9
    assert saved.sha256 == file_sha256(weights) and saved.size_bytes == weights.stat().st_size
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["target_modules"] == ["lm_head"] and config["r"] == 16
    # a small adapter: the head's two low-rank matrices, not the frozen head (100 x 192 floats) beside them
    assert set(load_file(str(weights))) == HEAD_ADAPTER and saved.size_bytes < 100 * 192 * 4


def test_its_validation_loss_goes_down_from_the_base_models(head_run, tiny_model_dir):
    spec, _, records, _, _ = head_run
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    before = validation_loss(base, tokenizer, spec.validation_rows)
    epochs = [r.validation_loss for r in records if r.type == "step_logged" and r.validation_loss is not None]
    assert len(epochs) == 3  # one validation an epoch
    assert before > epochs[0] > epochs[-1], (before, epochs)


def test_only_the_heads_adapter_changed_and_the_tied_input_embedding_stayed(head_run, tiny_model_dir):
    *_, seen = head_run
    model, before = seen["model"], seen["before"]
    assert seen["trainable"] == {
        "base_model.model.lm_head.lora_A.default.weight", "base_model.model.lm_head.lora_B.default.weight"
    }
    changed = {name for name, value in model.named_parameters() if not torch.equal(value, before[name])}
    assert changed == seen["trainable"]
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    inner = model.get_base_model()
    assert inner.model.embed_tokens.weight is inner.lm_head.base_layer.weight  # still one tensor, as built
    for name, value in base.state_dict().items():
        assert torch.equal(inner.state_dict()[name.replace("lm_head.", "lm_head.base_layer.")], value), name


def test_merge_model_gives_the_head_its_own_weight_and_answers_as_the_adapter(head_run, tiny_model_dir, tmp_path):
    _, storage, *_ = head_run
    adapter = storage / "runs" / "head-1" / "adapter"
    summary = merge_into_checkpoint(MergeSpec.from_dict({
        "run_id": "head-1", "model": str(tiny_model_dir), "adapter": str(adapter), "best_round": 9,
        "storage": {"location": str(storage), "endpoint_url": None},
    }))
    merged = AutoModelForCausalLM.from_pretrained(summary["location"], dtype=torch.float32)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    with_adapter = PeftModel.from_pretrained(
        AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32), str(adapter)
    )
    assert merged.config.tie_word_embeddings is False
    assert torch.equal(merged.model.embed_tokens.weight, base.model.embed_tokens.weight)
    assert not torch.equal(merged.lm_head.weight, base.lm_head.weight)
    ids = torch.tensor([[2, 10, 11, 12, 13, 14, 15]])
    with torch.no_grad():
        assert torch.allclose(merged(input_ids=ids).logits, with_adapter(input_ids=ids).logits, atol=1e-4)


def test_rl_starts_from_a_head_adapter_keeping_its_head_and_training_every_linear_layer(head_run, tiny_model_dir,
                                                                                         tmp_path):
    _, _, records, *_ = head_run
    saved = next(r for r in records if r.type == "adapter_saved")
    rl = RunSpec.from_dict({
        "run_id": "rl-from-head", "model": {"path_or_id": str(tiny_model_dir)},
        "reward": {"config": {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}},
        "train_rows": math_pairs_rows(seed=11, count=64), "validation_rows": math_pairs_rows(seed=12, count=16),
        "storage": {"location": str(tmp_path)}, "deadline": NO_LIMIT,
        **rl_settings(rounds=1, prompts_per_round=8, answers_per_prompt=4, max_answer_tokens=8, learning_rate=5e-4,
                      micro_batch_size=32, training_window=128),
        "start_adapter": {"path": saved.location, "sha256": saved.sha256, "size_bytes": saved.size_bytes},
    })
    policy = load_policy(rl, load_tokenizer(rl), trains="linear")
    trainable = {name for name, value in policy.model.named_parameters() if value.requires_grad}
    assert "base_model.model.lm_head.lora_B.default.weight" in trainable
    assert any(".q_proj.lora_A." in name for name in trainable) and any(".down_proj." in name for name in trainable)
    head = load_file(str(Path(saved.location) / "adapter_model.safetensors"))
    assert torch.equal(policy.model.get_base_model().lm_head.lora_B["default"].weight,
                       head["base_model.model.lm_head.lora_B.weight"])

    rl_records: list = []
    assert run(rl, emit=rl_records.append), rl_records[-1]
    kept = next(r for r in rl_records if r.type == "adapter_saved")
    config = json.loads((Path(kept.location) / "adapter_config.json").read_text())
    assert "lm_head" in config["target_modules"] and "q_proj" in config["target_modules"]
    kept_weights = load_file(str(Path(kept.location) / "adapter_model.safetensors"))
    assert not any(key.endswith("base_layer.weight") for key in kept_weights)  # no frozen head in it


def test_head_continues_a_head_adapter_and_still_trains_the_head_alone(head_run, tiny_model_dir, tmp_path):
    *_, records, _, _ = head_run
    saved = next(r for r in records if r.type == "adapter_saved")
    start = load_file(str(Path(saved.location) / "adapter_model.safetensors"))
    seen: dict = {}

    def watching(spec, model, *rest):
        seen["trainable"] = {name for name, value in model.named_parameters() if value.requires_grad}
        seen["start_b"] = model.get_base_model().lm_head.lora_B["default"].weight.detach().clone()
        return build_head_trainer(spec, model, *rest)

    spec = head_spec(tiny_model_dir, tmp_path, run_id="head-2", epochs=1, start_adapter={
        "path": saved.location, "sha256": saved.sha256, "size_bytes": saved.size_bytes})
    again: list = []
    assert run_tuning(spec, watching, again.append), again[-1]
    assert seen["trainable"] == {
        "base_model.model.lm_head.lora_A.default.weight", "base_model.model.lm_head.lora_B.default.weight"
    }
    assert torch.equal(seen["start_b"], start["base_model.model.lm_head.lora_B.weight"])  # continued, not new


def test_sft_refuses_in_words_to_continue_an_adapter_on_the_head(head_run, tiny_model_dir, tmp_path):
    *_, records, _, _ = head_run
    saved = next(r for r in records if r.type == "adapter_saved")
    spec = head_spec(tiny_model_dir, tmp_path, objective="sft", start_adapter={
        "path": saved.location, "sha256": saved.sha256, "size_bytes": saved.size_bytes})
    failed: list = []
    assert not run_tuning(spec, trainer_builder("sft"), failed.append)
    assert failed[-1].message == TRL_LEAVES_HEAD_OUT.format(name="SFT")
