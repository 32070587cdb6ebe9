"""Two training loops taking turns a round at a time: each round of one is timed between rounds of the other, so that
both are measured in the same seconds of a machine whose speed moves.

Why. On a shared machine the speed moves by 10-30% from one minute to the next. Blocks of rounds taken in turn
(bench/trainer_vs_trl.py's default) time the faster side over a few seconds of each block and the slower over the
rest: a slow stretch can fall on one side only. Taken one round each, every round of one side has a round of the
other beside it. Only one loop runs at a time (the other waits on a pipe, outside its timing), so neither takes the
other's cores.

Why a process. The first loop runs in a process of its own (spawned), in its main thread: torch's element-wise
operations run about seven times slower on a thread other than a process's first (each parallel region pays for
its threads there; measured here: 194 us against 28 for one product), and matrix products do not (MKL keeps its own).

`start(loop)` spawns the first loop (`loop(after_round=hook)`, picklable: a module-level function or a partial of
one) and returns once it has played its setup and round 0; the second loop, on the calling process, calls
`other_round()` after each of its rounds, and the first one plays its next round meanwhile; `finish()` gives the
first loop's result.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from typing import Any


class TakingTurns:
    def __init__(self, last_round: int) -> None:
        self.last_round = last_round  # the first loop's last round: it does not wait after it

    def start(self, loop: Callable[..., Any]) -> None:
        context = multiprocessing.get_context("spawn")
        self._pipe, theirs = context.Pipe()
        self._process = context.Process(target=_play, args=(loop, theirs, self.last_round), daemon=True)
        self._process.start()
        self._wait("played")

    def other_round(self) -> None:
        """The second loop's round is played: the first loop plays one; → once it has."""
        self._pipe.send("go")
        self._wait("played")

    def finish(self) -> Any:
        result = self._wait("result")
        self._process.join()
        return result

    def _wait(self, expected: str) -> Any:
        kind, payload = self._pipe.recv()
        if kind == "failed":
            raise RuntimeError(f"the loop taking turns failed:\n{payload}")
        if kind != expected:
            raise RuntimeError(f"the loop taking turns sent {kind!r} where {expected!r} was due")
        return payload


def _play(loop: Callable[..., Any], pipe, last_round: int) -> None:
    """The first loop, in its process: after each round, say so, and wait for the other's next (not after the
    last)."""

    def after_round(record) -> None:
        pipe.send(("played", None))
        if record.round < last_round:
            pipe.recv()

    try:
        result = loop(after_round=after_round)
    except BaseException:  # the other side must not wait for a round that will not come
        pipe.send(("failed", traceback.format_exc()))
        raise
    pipe.send(("result", result))
