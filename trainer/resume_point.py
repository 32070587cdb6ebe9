"""What a checkpoint holds of a run's generators and prompt schedule (trainer/checkpoint.py).

A round samples the next round's answers together with its own validation (trainer/round.py), so by the time the
round's checkpoint is written the generators and the schedule have already moved on into the next round. The round
takes this snapshot before that decode; the checkpoint stores it, and a resumed run makes the same decode again.
"""

from __future__ import annotations

import random
from typing import Any

import torch


def resume_point(backend, schedule) -> dict[str, Any]:
    """The random generators' states (torch's, CUDA's, Python's, the sampling backend's) and the schedule's
    position, as they are now."""
    return {
        "random": {
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
            "python": random.getstate(),
            "backend": backend.random_state(),
        },
        "schedule": schedule.position(),
    }
