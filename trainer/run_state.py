"""What a run keeps from round to round: the best round and its adapter (saved when the run ends), the rounds done,
the slowest round (the time-limit rule's guess at the next one) and whether any round had a learning signal."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from trainer.adapter_store import store_adapter
from trainer.model_loading import Policy
from trainer.progress import AdapterSaved
from trainer.spec import RunSpec
from trainer.storage import RunStorage


@dataclass
class RunState:
    best_round: int = 0
    best_validation: float = float("-inf")
    best_adapter: dict[str, torch.Tensor] = field(default_factory=dict)
    rounds_done: int = 0
    slowest_round_seconds: float = 0.0
    rounds_with_signal: int = 0
    uniform_values: set[float] = field(default_factory=set)  # the rewards of rounds that had nothing to learn from

    def to_checkpoint(self) -> dict[str, Any]:
        """Every field, as a checkpoint stores it (trainer/checkpoint.py)."""
        values = asdict(self)
        values["uniform_values"] = sorted(self.uniform_values)
        return values

    def restore(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            setattr(self, name, set(value) if name == "uniform_values" else value)

    def keep_starting_adapter(self, validation_reward: float, policy: Policy) -> None:
        """Round 0: the starting adapter is the best so far, whatever it scored."""
        self.best_validation = validation_reward
        self.best_adapter = adapter_snapshot(policy)

    def keep_if_best(self, round_number: int, validation_reward: float, policy: Policy) -> None:
        """Keep this round's adapter if it validated better than every earlier round (ties keep the earlier)."""
        if validation_reward > self.best_validation:
            self.best_validation = validation_reward
            self.best_round = round_number
            self.best_adapter = adapter_snapshot(policy)

    def count_signal(self, updated: bool, rewards: torch.Tensor) -> None:
        """rewards: [prompts, answers] of a round that updated the adapter, or whose answers all scored alike."""
        if updated:
            self.rounds_with_signal += 1
        else:
            self.uniform_values.update(float(v) for v in rewards.flatten().tolist())


def adapter_snapshot(policy: Policy) -> dict[str, torch.Tensor]:
    """A copy of the adapter's weights on the CPU, which later updates leave as it is."""
    from peft import get_peft_model_state_dict

    state = get_peft_model_state_dict(policy.model, save_embedding_layers=False)  # not a targeted head's frozen weight
    return {k: v.detach().to("cpu", copy=True) for k, v in state.items()}


def save_best_adapter(spec: RunSpec, storage: RunStorage, policy: Policy, state: RunState) -> AdapterSaved:
    """Put the best round's weights back in the model, and store them."""
    from peft import set_peft_model_state_dict

    set_peft_model_state_dict(policy.model, state.best_adapter)
    return store_adapter(spec.run_id, storage, policy.model, state.best_round)
