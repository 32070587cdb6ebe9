"""Which prompts each round takes, and the fixed validation sample."""

from __future__ import annotations

import random
from typing import Any


class PromptSchedule:
    """Each round takes the next `per_round` training prompts, none twice in a round; when they run out the
    prompts are gone through again in a new seeded order.

    >>> schedule = PromptSchedule(count=5, per_round=2, seed=0)
    >>> rounds = [schedule.next_round() for _ in range(5)]
    >>> sorted(i for r in rounds[:2] for i in r) == sorted(set(i for r in rounds[:2] for i in r))
    True
    """

    def __init__(self, count: int, per_round: int, seed: int) -> None:
        self.count = count
        self.per_round = min(per_round, count)
        self.rng = random.Random(f"prompt-order-{seed}")
        self.order: list[int] = []

    def next_round(self) -> list[int]:
        taken: list[int] = []
        while len(taken) < self.per_round:
            if not self.order:
                self.order = list(range(self.count))
                self.rng.shuffle(self.order)
            # a prompt already taken this round waits for the next round, keeping its place
            index = next((i for i in self.order if i not in taken), None)
            if index is None:
                self.order = []
                continue
            self.order.remove(index)
            taken.append(index)
        return taken

    def position(self) -> dict[str, Any]:
        """Where the schedule stands: the prompts left in this pass, in order, and the generator of the next."""
        return {"order": list(self.order), "rng": self.rng.getstate()}

    def restore(self, position: dict[str, Any]) -> None:
        self.order = list(position["order"])
        self.rng.setstate(as_tuples(position["rng"]))


def as_tuples(value: Any) -> Any:
    """A Python generator's state as random.setstate wants it (tuples) from a checkpoint that stored it as lists.

    >>> as_tuples([3, [1, 2], None])
    (3, (1, 2), None)
    """
    if isinstance(value, list | tuple):
        return tuple(as_tuples(v) for v in value)
    return value


def validation_sample(count: int, size: int, seed: int) -> list[int]:
    """A fixed, seeded sample of up to `size` validation rows, in row order.

    >>> validation_sample(count=3, size=128, seed=0)
    [0, 1, 2]
    """
    if count <= size:
        return list(range(count))
    return sorted(random.Random(f"validation-{seed}").sample(range(count), size))
