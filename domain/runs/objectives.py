"""The three Training objectives (000: RL "beside SFT and DPO") and the settings only SFT and DPO have.

SFT trains on a version's training examples (the whole conversation, loss on the assistant turns); DPO on its
preference pairs (the prompt, the chosen answer and the rejected one). Both train a LoRA adapter, validate on the
validation examples by their loss, and share Learning rate, Training window, Micro batch size and the adapter's
size and scaling with RL (under Advanced settings).

Defaults, where the documents give none: SFT learns at 2e-4 (a LoRA adapter on supervised data moves far less than
a full model, and 1e-4-3e-4 is the usual LoRA range), 3 epochs, batches of 8; DPO at RL's 5e-6 (preference
gradients are sharp) with beta 0.1, DPO's usual strength of the pull toward the starting model.
"""

from __future__ import annotations

from typing import Any

RL, SFT, DPO = "rl", "sft", "dpo"
OBJECTIVE_CHOICES: tuple[tuple[str, str], ...] = (
    (RL, "RL · reinforcement learning (GRPO)"),
    (SFT, "SFT · supervised fine-tuning"),
    (DPO, "DPO · direct preference optimization"),
)
OBJECTIVE_NAMES = {RL: "RL", SFT: "SFT", DPO: "DPO"}
LEARNING_RATE_DEFAULTS = {RL: 0.000005, SFT: 0.0002, DPO: 0.000005}

# (name, label, kind, default, minimum, maximum, hint): settings.py makes FieldSpecs of them
OBJECTIVE_SETTINGS: tuple[tuple[str, str, str, Any, float, float, str], ...] = (
    ("epochs", "Epochs", "int", 3, 1, 100, "Passes over the training examples (SFT and DPO)."),
    (
        "batch_size",
        "Batch size",
        "int",
        8,
        1,
        1024,
        "Examples per optimizer step (SFT and DPO); a multiple of Micro batch size.",
    ),
    ("beta", "DPO beta", "float", 0.1, 0.01, 10, "How strongly DPO keeps to the model it starts from."),
)
BLOCK_FIELDS: dict[str, tuple[str, ...]] = {SFT: ("epochs", "batch_size"), DPO: ("epochs", "batch_size", "beta")}

OBJECTIVE_MESSAGE = 'Training objective must be one of: rl, sft, dpo (training.objective "rl", "sft" or "dpo").'
BATCH_MESSAGE = "Batch size must be a multiple of Micro batch size: each step adds up whole micro batches."
NEEDS_VERSION = "{name} trains on a dataset version's examples: choose a Dataset version."
NEEDS_PAIRS = "DPO trains on preference pairs (prompt, chosen, rejected): {label} has none."


def is_rl(objective: str) -> bool:
    return objective == RL
