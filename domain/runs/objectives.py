"""The Training objectives (000: RL "beside SFT and DPO"; 001's "Head") and the settings only SFT, DPO and Head have.

SFT trains on a version's training examples (the whole conversation, loss on the assistant turns); DPO on its
preference pairs (the prompt, the chosen answer and the rejected one). Head trains on SFT's data, but its adapter
is a LoRA on the output head alone (the rest of the model stays frozen): fast and cheap, it learns the answers'
format and vocabulary, not new reasoning. All three train a LoRA adapter, validate on the validation examples by
their loss, and share Learning rate, Training window, Micro batch size and the adapter's size and scaling with RL
(under Advanced settings).

Defaults, where the documents give none: SFT learns at 2e-4 (a LoRA adapter on supervised data moves far less than
a full model, and 1e-4-3e-4 is the usual LoRA range), 3 epochs, batches of 8; DPO at RL's 5e-6 (preference
gradients are sharp) with beta 0.1, DPO's usual strength of the pull toward the starting model. Head learns at
1e-3, five times SFT's rate: it fits one linear map (the head's low-rank update) on features the frozen model
computes, which is close to logistic regression, so no deeper layer shifts under it and larger steps stay stable;
at SFT's rate the few parameters it has would need many more epochs to move. Its epochs and batches are SFT's.
"""

from __future__ import annotations

RL, SFT, DPO, HEAD = "rl", "sft", "dpo", "head"
OBJECTIVE_CHOICES: tuple[tuple[str, str], ...] = (
    (RL, "RL · reinforcement learning (GRPO)"),
    (SFT, "SFT · supervised fine-tuning"),
    (DPO, "DPO · direct preference optimization"),
    (HEAD, "Head · train the output head only"),
)
OBJECTIVE_NAMES = {RL: "RL", SFT: "SFT", DPO: "DPO", HEAD: "Head"}
A_RUN = {RL: "an RL run", SFT: "an SFT run", DPO: "a DPO run", HEAD: "a Head run"}
# SFT, DPO and Head learn at their own rate where the Learning rate is left out (RL's is the setting's default,
# domain/runs/run_settings.py); their epochs, batch size and beta are settings of their own there too.
LEARNING_RATE_DEFAULTS = {SFT: 0.0002, DPO: 0.000005, HEAD: 0.001}

OBJECTIVE_MESSAGE = (
    'Training objective must be one of: rl, sft, dpo, head (training.objective "rl", "sft", "dpo" or "head").'
)
BATCH_MESSAGE = "Batch size must be a multiple of Micro batch size: each step adds up whole micro batches."
NEEDS_VERSION = "{name} trains on a dataset version's examples: choose a Dataset version."
NEEDS_PAIRS = "DPO trains on preference pairs (prompt, chosen, rejected): {label} has none."
HEAD_STARTS_FROM_HEAD = (
    "Head trains the output head alone, so it can only continue a Head run's adapter: {run} is {a_run}, "
    "whose adapter changes more than the head. Leave Start from empty to train a new head adapter."
)
TUNING_FROM_HEAD = (
    "{name} can't continue the adapter of {run}: it trains the output head (a Head run's adapter, or one started "
    "from it), and {name} computes its loss from the head's own weight, so it would leave that part out. Start RL "
    "from it, or start {name} from the base model or another run."
)


def is_rl(objective: str) -> bool:
    return objective == RL
