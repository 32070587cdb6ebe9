"""Switching a model between training and evaluation mode without walking its module tree every time.

`nn.Module.train(mode)` recurses through every child by generator; a peft model of the tiny model has hundreds of
modules, and a round switches mode four times (sampling and validation each go to eval and back): about 3 ms each
on a CPU, 5% of a round. The modules are listed once per model and their flag set directly, which is all that
`nn.Module.train` does for a module that does not override it.
"""

from __future__ import annotations

import weakref

import torch

_modules: weakref.WeakKeyDictionary[torch.nn.Module, list[torch.nn.Module]] = weakref.WeakKeyDictionary()


def set_training(model: torch.nn.Module, training: bool) -> None:
    """`model.train(training)`. A model with a module that overrides `train` (peft's DoRA layers, transformers'
    kernels) is switched by its own `train`, so whatever that override does still happens."""
    modules = _modules.get(model)
    if modules is None:
        modules = list(model.modules())
        if not all(_plain_train(m) for m in modules):
            model.train(training)
            return
        _modules[model] = modules
    for module in modules:
        # the flag itself, as nn.Module.train sets it, without nn.Module.__setattr__'s checks
        module.__dict__["training"] = training


def _plain_train(module: torch.nn.Module) -> bool:
    """Whether `train` of this module does only what nn.Module's does (transformers' PreTrainedModel.train adds
    only a kernel re-cast when `use_kernels` is on)."""
    train = type(module).train
    if train is torch.nn.Module.train:
        return True
    from transformers import PreTrainedModel

    return train is PreTrainedModel.train and not getattr(module, "use_kernels", False)
