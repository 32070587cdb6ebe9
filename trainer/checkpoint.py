"""A finished round's checkpoint: all a run needs to go on after that round exactly as if it had never stopped.

It holds the adapter's weights, the optimizer's state, every random generator's state (torch's, Python's, the
sampling backend's), the prompt schedule's position and what the run keeps from round to round (the best round and
its adapter, the slowest round, the rounds with a learning signal). One file, `runs/<run id>/checkpoints/round-NNN.pt`
in the run's storage, written after each finished round; its sha256 travels in that round's progress record, so
the supervisor knows which checkpoint belongs to which recorded round. The one before it is kept until the next is
written (a worker may die between the file and the record), older ones are deleted: the latest round's file, and
with it the best round's adapter, is all that is kept; a run that did all its rounds keeps none
(trainer/checkpoint_files.py), while one stopped by its time limit or memory, or cancelled, keeps its last for
Continue from round N.

A checkpoint that does not match its recorded sha256 is never loaded (CheckpointUnusable).
"""

from __future__ import annotations

import hashlib
import io
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from trainer.checkpoint_files import checkpoint_key
from trainer.failures import RunFailed
from trainer.resume_point import resume_point
from trainer.round import RoundSetup
from trainer.run_state import RunState, adapter_snapshot
from trainer.schedule import as_tuples
from trainer.spec import ResumeFrom
from trainer.storage import RunStorage

FORMAT_VERSION = 1


class CheckpointUnusable(RunFailed):
    """The checkpoint to resume from is missing, or its bytes are not the recorded ones."""


@dataclass(frozen=True)
class CheckpointWritten:
    """What a round's record says of its checkpoint."""

    key: str
    sha256: str
    size_bytes: int
    seconds: float


def write_checkpoint(setup: RoundSetup, state: RunState, round_number: int, storage: RunStorage,
                     clock: Callable[[], float] = time.perf_counter,
                     point: dict[str, Any] | None = None) -> CheckpointWritten:
    """Write round `round_number`'s checkpoint and delete the one of two rounds before (the previous round's stays
    until this one's record is out). `point`: the generators and schedule as the round left them before it sampled
    the next round with its validation (trainer/resume_point.py); as they are now where None."""
    started = clock()
    buffer = io.BytesIO()
    torch.save(_payload(setup, state, round_number, point), buffer)
    data = buffer.getvalue()
    key = checkpoint_key(setup.spec.run_id, round_number)
    storage.put_bytes(key, data)
    if round_number > 2:
        storage.delete(checkpoint_key(setup.spec.run_id, round_number - 2))
    return CheckpointWritten(key, hashlib.sha256(data).hexdigest(), len(data), round(clock() - started, 3))


def resume_from_checkpoint(setup: RoundSetup, state: RunState, storage: RunStorage, resume: ResumeFrom) -> None:
    """Put the run back as it was when round `resume.round` ended: weights, optimizer, generators, schedule, state."""
    key = checkpoint_key(setup.spec.run_id, resume.round)
    try:
        data = storage.get_bytes(key)
    except (FileNotFoundError, KeyError):
        raise CheckpointUnusable(f"The checkpoint of round {resume.round} is missing; the run cannot resume.") from None
    if hashlib.sha256(data).hexdigest() != resume.sha256:
        raise CheckpointUnusable(
            f"The checkpoint of round {resume.round} does not match its checksum; it was not used."
        )
    payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    if payload.get("format") != FORMAT_VERSION or payload.get("round") != resume.round:
        raise CheckpointUnusable(f"The checkpoint of round {resume.round} is of another version; it was not used.")
    _restore(setup, state, payload)


def _payload(setup: RoundSetup, state: RunState, round_number: int, point: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "format": FORMAT_VERSION,
        "round": round_number,
        "adapter": adapter_snapshot(setup.policy),
        "optimizer": setup.optimizer.state_dict(),
        **(point if point is not None else resume_point(setup.backend, setup.schedule)),  # random, schedule
        "run_state": state.to_checkpoint(),
    }


def _restore(setup: RoundSetup, state: RunState, payload: dict[str, Any]) -> None:
    from peft import set_peft_model_state_dict

    set_peft_model_state_dict(setup.policy.model, payload["adapter"])
    setup.backend.adapter_changed()
    setup.optimizer.load_state_dict(payload["optimizer"])
    randoms = payload["random"]
    torch.set_rng_state(randoms["torch"])
    if randoms["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(randoms["cuda"])
    random.setstate(as_tuples(randoms["python"]))
    setup.backend.restore_random_state(randoms["backend"])
    setup.schedule.restore(payload["schedule"])
    state.restore(payload["run_state"])

