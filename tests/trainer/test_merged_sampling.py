"""Sampling with the LoRA adapter merged into the base weights (trainer/merged_adapter.py) answers as the unmerged
adapter does, and leaves the model exactly as it found it: the update that follows sees the same weights and
computes the same loss and gradient."""

from __future__ import annotations

import pytest
import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

from trainer.grpo import build_shared_prompt_batch, shared_prompt_logprobs_and_entropy
from trainer.merged_adapter import merges_exactly
from trainer.sampling import TransformersBackend


@pytest.fixture(scope="module")
def trained(adapted):
    """The adapted tiny model (tests/trainer/conftest.py), in training mode as the update has it."""
    adapted[1].train()
    return adapted


def backend(trained, merges: bool, seed: int = 0) -> TransformersBackend:
    tokenizer, model, _, end_ids = trained
    sampler = TransformersBackend(model, tokenizer.pad_token_id, end_ids, torch.device("cpu"), seed=seed)
    assert sampler.merges  # a float model on the CPU merges
    sampler.merges = merges
    return sampler


def tokens(groups) -> list[list[list[int]]]:
    return [[answer.token_ids for answer in group] for group in groups]


def test_merged_greedy_answers_are_the_unmerged_adapters(trained, tiny_model_dir):
    prompts = trained[2]
    unmerged = tokens(backend(trained, merges=False).sample(prompts, 1, 12, True, lambda: False))
    merged = tokens(backend(trained, merges=True).sample(prompts, 1, 12, True, lambda: False))
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    without_adapter = TransformersBackend(base, trained[0].pad_token_id, trained[3], torch.device("cpu"), seed=0)
    assert merged == unmerged
    assert tokens(without_adapter.sample(prompts, 1, 12, True, lambda: False)) != merged  # the adapter counts


def test_merged_sampled_answers_are_the_unmerged_adapters_for_the_same_seed(trained):
    prompts = trained[2][:16]
    unmerged = tokens(backend(trained, merges=False, seed=7).sample(prompts, 8, 12, False, lambda: False))
    merged = tokens(backend(trained, merges=True, seed=7).sample(prompts, 8, 12, False, lambda: False))
    same = sum(a == b for ga, gb in zip(merged, unmerged, strict=True) for a, b in zip(ga, gb, strict=True))
    # the probabilities differ by float rounding only, so a draw may differ only where it falls on a boundary
    assert same >= 0.98 * 16 * 8


def test_sampling_merged_leaves_the_weights_and_the_gradient_exactly_as_they_were(trained):
    _, model, prompts, _ = trained
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    batch = build_shared_prompt_batch(prompts[:4], [[5, 6, 7], [8], [9, 10], [11, 12, 13, 14]], [0, 1, 2, 3], 0)
    trained_parameters = [p for p in model.parameters() if p.requires_grad]

    def loss_and_gradient():
        logprobs, _ = shared_prompt_logprobs_and_entropy(model, batch)
        loss = (logprobs * batch.answer_mask).sum()
        return loss.detach(), torch.autograd.grad(loss, trained_parameters)

    loss, gradient = loss_and_gradient()
    sampler = backend(trained, merges=True)
    for _ in range(30):  # merging and unmerging by subtraction would drift a little every time
        sampler.sample(prompts[:8], 2, 6, False, lambda: False)

    assert all(torch.equal(p, before[name]) for name, p in model.named_parameters())
    assert model.training
    loss_after, gradient_after = loss_and_gradient()
    assert torch.equal(loss_after, loss)
    assert all(torch.equal(a, b) for a, b in zip(gradient_after, gradient, strict=True))


def test_the_adapter_stays_unmerged_on_a_head_tied_to_the_input_embedding(trained, tiny_model_dir):
    assert merges_exactly(trained[1])  # on a GPU too: the base weights' copy waits in pinned CPU memory
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert base.get_output_embeddings().weight is base.get_input_embeddings().weight  # the tiny model ties them
    head = get_peft_model(base, LoraConfig(r=4, target_modules=["lm_head"], task_type="CAUSAL_LM"))
    assert not merges_exactly(head)  # merging would change the input embedding too


def test_while_merged_the_base_layers_stand_in_the_lora_layers_places_and_go_back_after(trained):
    from peft.tuners.lora import LoraLayer

    from trainer.merged_adapter import MergedAdapter, MergedLinear

    model = trained[1]
    tree = dict(model.named_modules())
    merged = MergedAdapter(model)
    assert len(merged.places) == sum(isinstance(m, LoraLayer) for m in tree.values()) > 0
    with merged.merged():
        inside = dict(model.named_modules())
        assert not any(isinstance(m, LoraLayer) for m in inside.values())
        lora = {name: layer for name, layer in tree.items() if isinstance(layer, LoraLayer)}
        # on the CPU each plain layer is merged beside its base weight; any other into it
        assert all(isinstance(inside[name], MergedLinear) for name in lora)
        for name, layer in lora.items():
            x = torch.randn(3, layer.get_base_layer().in_features)
            assert torch.allclose(inside[name](x), layer.get_base_layer()(x) + layer.lora_B["default"](
                layer.lora_A["default"](x)) * layer.scaling["default"], atol=1e-5)
    assert dict(model.named_modules()) == tree
    assert all(not layer.merged for layer in tree.values() if isinstance(layer, LoraLayer))


def test_set_training_switches_every_module_as_train_does(trained):
    from trainer.training_mode import set_training

    model = trained[1]
    set_training(model, False)
    assert not any(m.training for m in model.modules())
    set_training(model, True)
    assert all(m.training for m in model.modules())
