"""Where a run's round checkpoints live in its storage, and their removal once the run has no use for them.

Apart from trainer/checkpoint.py (which writes and reads them, and imports the round's machinery) so that the run's
endings (trainer/endings.py) can give their storage back without importing the round.
"""

from __future__ import annotations

from trainer.storage import RunStorage


def checkpoint_key(run_id: str, round_number: int) -> str:
    """Where round `round_number`'s checkpoint is kept in the run's storage.

    >>> checkpoint_key("r1", 12)
    'runs/r1/checkpoints/round-012.pt'
    """
    return f"runs/{run_id}/checkpoints/round-{round_number:03d}.pt"


def discard_checkpoints(storage: RunStorage, run_id: str, last_round: int) -> None:
    """A run that did all its rounds has nothing to resume or continue: its last two checkpoints (all that
    write_checkpoint leaves) give back their storage, a 0.5B model's adapter and optimizer about 280 MB."""
    for round_number in (last_round - 1, last_round):
        if round_number >= 1:
            storage.delete(checkpoint_key(run_id, round_number))
