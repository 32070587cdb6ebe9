"""Our clipped GRPO surrogate against TRL's own code: TRL 1.16's GRPOTrainer, built on the tiny model with LoRA,
computes its loss (`_compute_loss`) on a batch whose old log-probabilities differ from the current ones (the ratio
of a round's second pass, ≠ 1, with tokens on both sides of the clip); ours (trainer/grpo.py) gets the same tensors.
The losses, the gradients of every adapter weight and the share of clipped tokens agree for grpo, dapo and dr_grpo,
with PPO's clip range and with DAPO's clip-higher."""

from __future__ import annotations

import tempfile

import pytest
import torch

from trainer.grpo import answer_logprobs_and_entropy, build_batch, clipped_tokens, policy_loss, token_weights

pytestmark = pytest.mark.slow

LONGEST = 6  # max_completion_length
PROMPT = 5  # every prompt this long: no left padding, so TRL's positions (it passes none) are ours


def _trl_trainer(model_dir, loss_type: str, clip_high: float):
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    output = tempfile.mkdtemp(prefix="verity-trl-")
    config = GRPOConfig(
        output_dir=output, per_device_train_batch_size=4, num_generations=4, max_completion_length=LONGEST,
        beta=0.0, loss_type=loss_type, num_iterations=2, epsilon=0.2, epsilon_high=clip_high, use_cpu=True,
        bf16=False, fp16=False, report_to="none", save_strategy="no", seed=0, gradient_checkpointing=False,
    )
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = GRPOTrainer(
        model=model, reward_funcs=lambda completions, **_: [0.0] * len(completions), args=config,
        train_dataset=Dataset.from_list([{"prompt": "1+1="}] * 4),
        processing_class=AutoTokenizer.from_pretrained(model_dir), peft_config=lora,
    )
    trainer.current_gradient_accumulation_steps = 1  # set by train(); one micro batch, one step here
    with torch.no_grad():  # LoRA's B starts at zero: move it, so the adapter's gradients are not all alike
        for name, weight in trainer.model.named_parameters():
            if "lora_B" in name:
                weight.normal_(0.0, 0.05)
    return trainer


def _grads(model) -> dict[str, torch.Tensor]:
    return {name: w.grad.detach().clone() for name, w in model.named_parameters() if w.requires_grad}


@pytest.mark.parametrize("clip_high", [0.2, 0.28])
@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
def test_the_clipped_surrogate_equals_trls_loss_and_gradients(tiny_model_dir, loss_type: str, clip_high: float):
    trainer = _trl_trainer(tiny_model_dir, loss_type, clip_high)
    model = trainer.model
    model.train()
    generator = torch.Generator().manual_seed(7)
    vocab = model.config.vocab_size
    prompts = [torch.randint(3, vocab, (PROMPT,), generator=generator).tolist() for _ in range(4)]
    lengths = [6, 3, 5, 1]
    answers = [torch.randint(3, vocab, (n,), generator=generator).tolist() for n in lengths]
    advantages = torch.tensor([0.9, -0.7, 0.4, -1.1])
    batch = build_batch(prompts, answers, pad_id=0)
    mask = batch.answer_mask.float()
    with torch.no_grad():
        current, _ = answer_logprobs_and_entropy(model, batch)
    # the sampling policy's log-probabilities: some tokens far enough off that the clip acts on both sides
    old = current + torch.randn(current.shape, generator=generator) * 0.4

    trl_inputs = {
        "prompt_ids": batch.input_ids[:, :PROMPT], "prompt_mask": batch.attention_mask[:, :PROMPT],
        "completion_ids": batch.input_ids[:, PROMPT:], "completion_mask": batch.attention_mask[:, PROMPT:],
        "advantages": advantages, "old_per_token_logps": old, "num_items_in_batch": mask.sum(),
    }
    model.zero_grad(set_to_none=True)
    trl_loss = trainer._compute_loss(model, trl_inputs)
    trl_loss.backward()
    trl_grads = _grads(model)
    trl_clipped = trainer._metrics["train"]["clip_ratio/region_mean"][-1]

    model.zero_grad(set_to_none=True)
    logprobs, _ = answer_logprobs_and_entropy(model, batch)
    weights = token_weights(loss_type, torch.tensor(lengths), LONGEST)
    ours = policy_loss(logprobs, mask, advantages, weights, old_logprobs=old, clip_low=0.2, clip_high=clip_high)
    ours.backward()
    our_grads = _grads(model)
    held = clipped_tokens(logprobs, old, mask, advantages, clip_low=0.2, clip_high=clip_high)

    assert 0 < held < float(mask.sum())  # the clip acted, and not on every token
    assert float(ours) == pytest.approx(float(trl_loss), abs=1e-6)
    assert our_grads.keys() == trl_grads.keys() and len(our_grads) > 0
    for name, grad in trl_grads.items():
        torch.testing.assert_close(our_grads[name], grad, rtol=0, atol=1e-6, msg=name)
    assert held / float(mask.sum()) == pytest.approx(trl_clipped, abs=1e-6)
