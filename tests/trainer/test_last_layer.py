"""The last decoder layer's feed-forward half run at the kept columns alone (trainer/last_layer.py) gives the kept
columns' logits and gradient of the whole pass, and runs on those columns only."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from trainer.last_layer import feed_forward_at


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return AutoModelForCausalLM.from_pretrained(tiny_model_dir)


@pytest.mark.parametrize("logits_to_keep", [1, 3, torch.tensor([2, 4, 5])])
def test_the_kept_columns_logits_and_gradient_are_the_whole_passes(model, logits_to_keep):
    ids = torch.randint(4, 90, (3, 7), generator=torch.Generator().manual_seed(0))
    widths = []
    hook = model.model.layers[-1].mlp.register_forward_pre_hook(lambda _, args: widths.append(args[0].shape[1]))
    try:
        plain = model(input_ids=ids, logits_to_keep=logits_to_keep).logits
        plain_grad = torch.autograd.grad(plain.square().sum(), model.model.embed_tokens.weight)[0]
        with feed_forward_at(model, logits_to_keep) as keep:
            assert keep == 0  # the layer gives the kept columns alone
            kept = model(input_ids=ids, logits_to_keep=keep).logits
        kept_grad = torch.autograd.grad(kept.square().sum(), model.model.embed_tokens.weight)[0]
    finally:
        hook.remove()
    columns = 3 if isinstance(logits_to_keep, torch.Tensor) else logits_to_keep
    assert widths == [7, columns]  # the whole pass's feed-forward, then the kept columns' alone
    torch.testing.assert_close(kept, plain, rtol=1e-5, atol=1e-6)
    # the same sums in other blockings of the products: equal to float rounding, measured against the largest
    assert (kept_grad - plain_grad).abs().max() <= 1e-5 * plain_grad.abs().max()
    assert "forward" not in vars(model.model.layers[-1])  # the layer's own forward is back


def test_a_layer_with_a_forward_of_its_own_is_left_alone(model):
    last = model.model.layers[-1]
    last.forward = last.forward  # an instance's own forward: not the Llama layer's code
    try:
        with feed_forward_at(model, 2) as keep:
            assert keep == 2  # the model slices the logits itself
    finally:
        del last.forward
