"""The model's output head as an adapter sees it: which layers a LoRA adapter trains, and the head's tied weights.

A Head run's adapter is a LoRA on the output head alone (`lm_head` in most causal LMs), so it is a regular, small
PEFT adapter that continues, merges and downloads like the others. Many models tie the head's weight to the input
embedding (one tensor for both). Training is safe with that: the LoRA's update is added only where the head
projects, the tied tensor itself stays frozen, so the input embedding stays as it was. Merging is not: adding
the update into the tied tensor would change the input embedding too, so a merge first gives the head its own
copy (`untie_output_head`).

An RL run that starts from a Head run keeps that head update and trains every other linear layer too
(`widened_config`), as a run with a new adapter would. SFT and DPO can't: TRL's trainers compute their loss from the
head's weight directly and would leave the head's update out, so the domain refuses them such a start.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import torch

# What an adapter trains: every linear layer but the output head (RL, SFT, DPO), or the output head alone (Head).
Trains = Literal["linear", "head"]


def output_head_name(model) -> str:
    """The output head's module name, e.g. "lm_head" (the name a LoRA's target_modules matches)."""
    head = model.get_output_embeddings()
    for name, module in model.named_modules():
        if module is head:
            return name.rsplit(".", 1)[-1]
    raise ValueError("this model has no output head to train")


def linear_layer_names(model) -> list[str]:
    """The names of the linear layers a new adapter trains: peft's "all-linear", as names, e.g. ["down_proj",
    "gate_proj", ..., "v_proj"] (the output head left out)."""
    head = model.get_output_embeddings()
    names = {
        name.rsplit(".", 1)[-1]
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and module is not head
    }
    return sorted(names)


def _targets(target_modules: Iterable[str] | str | None) -> set[str]:
    """An adapter config's target_modules as names; "all-linear" (a new adapter's) never holds the head."""
    if target_modules is None:
        return set()
    return {target_modules} if isinstance(target_modules, str) else set(target_modules)


def targets_only_head(target_modules: Iterable[str] | str | None, head_name: str) -> bool:
    """Whether an adapter's target_modules (its adapter_config.json's) name the output head and nothing else."""
    return _targets(target_modules) == {head_name}


def peft_model_trains_head(model) -> bool:
    """Whether a PeftModel's adapter has a part on the output head."""
    return output_head_name(model.get_base_model()) in _targets(model.peft_config["default"].target_modules)


def adapter_targets_head(folder: Path, model) -> bool:
    """Whether the adapter saved in `folder` trains the model's output head (a Head run's, or one continued from it)."""
    from peft import LoraConfig

    return output_head_name(model) in _targets(LoraConfig.from_pretrained(str(folder)).target_modules)


def widened_config(saved, model):
    """A head adapter's LoraConfig widened to every linear layer too, at its own rank and scaling."""
    from peft import LoraConfig

    head_name = output_head_name(model)
    return LoraConfig(
        r=saved.r,
        lora_alpha=saved.lora_alpha,
        lora_dropout=0.0,
        target_modules=[*linear_layer_names(model), head_name],
        task_type="CAUSAL_LM",
    )


def head_is_tied(model) -> bool:
    head, embedding = model.get_output_embeddings(), model.get_input_embeddings()
    return head is not None and embedding is not None and head.weight is embedding.weight


def untie_output_head(model) -> bool:
    """Give a tied output head its own copy of the weight, and say so in the config (so a saved checkpoint keeps
    both); returns whether it was tied. After this, merging a head update leaves the input embedding as it was."""
    if not head_is_tied(model):
        return False
    head = model.get_output_embeddings()
    head.weight = torch.nn.Parameter(head.weight.detach().clone(), requires_grad=head.weight.requires_grad)
    model.config.tie_word_embeddings = False
    text_config = model.config.get_text_config()
    if text_config is not model.config and hasattr(text_config, "tie_word_embeddings"):
        text_config.tie_word_embeddings = False
    return True
