"""The checkpoint of an SFT, DPO or Head run's finished epoch, and resuming from one.

The Trainer (TRL's, or transformers' for Head) saves its own checkpoint at each epoch's last step: the adapter, the
optimizer, the learning-rate schedule, every random generator and its state (which epoch, which step). This packs
that folder into one tar in the run's storage, `runs/<run id>/checkpoints/step-NNNNNN.tar`, and gives its sha256 to
the record of the step that ended the epoch, so the jobs know what a lost worker's run goes on from. The previous
epoch's is kept until the next one is written (a worker may die between the file and the record), older ones are
deleted, and a run that trained all its epochs deletes what is left. The last epoch's is never written: nothing
would go on from it.

Resuming unpacks the tar (refused when it is missing or does not match its recorded sha256) and hands the folder to
`trainer.train(resume_from_checkpoint=...)`, which goes on at the next epoch's first step.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from trainer.failures import RunFailed
from trainer.spec import ResumeFrom
from trainer.storage import RunStorage


class EpochCheckpointUnusable(RunFailed):
    """The epoch's checkpoint to resume from is missing, or its bytes are not the recorded ones."""


def epoch_checkpoint_key(run_id: str, step: int) -> str:
    """Where the checkpoint of the epoch that ended at optimizer step `step` is kept in the run's storage.

    >>> epoch_checkpoint_key("r1", 40)
    'runs/r1/checkpoints/step-000040.tar'
    """
    return f"runs/{run_id}/checkpoints/step-{step:06d}.tar"


def _packed(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(folder.rglob("*")):  # in order, so the same folder packs to the same bytes
            if path.is_file():
                info = tar.gettarinfo(str(path), arcname=str(path.relative_to(folder)))
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
    return buffer.getvalue()


class EpochCheckpoints(TrainerCallback):
    """Called by the Trainer after it saved an epoch's checkpoint folder: stores it, then lets the step's record
    out with its sha256 (`reporter`: trainer/tuning.py's StepReporter, which holds that record until now)."""

    def __init__(self, run_id: str, storage: RunStorage, reporter: Any, resumed_from: int | None = None) -> None:
        self.run_id = run_id
        self.storage = storage
        self.reporter = reporter
        self.written: list[int] = [resumed_from] if resumed_from is not None else []

    def on_save(self, args, state, control, **kwargs):
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if state.global_step < state.max_steps and folder.is_dir():  # the last epoch's: nothing goes on from it
            data = _packed(folder)
            self.storage.put_bytes(epoch_checkpoint_key(self.run_id, state.global_step), data)
            self.written.append(state.global_step)
            if len(self.written) > 2:
                self.storage.delete(epoch_checkpoint_key(self.run_id, self.written.pop(0)))
            self.reporter.flush(checkpoint_sha256=hashlib.sha256(data).hexdigest())
        else:
            self.reporter.flush()
        shutil.rmtree(folder, ignore_errors=True)  # the storage holds it now; the local disk keeps none

    def discard(self) -> None:
        """The run trained all its epochs (or stopped): no checkpoint is needed any more."""
        for step in self.written:
            self.storage.delete(epoch_checkpoint_key(self.run_id, step))
        self.written = []


def unpack_checkpoint(storage: RunStorage, run_id: str, resume: ResumeFrom, output_dir: str) -> str:
    """The folder `trainer.train(resume_from_checkpoint=...)` goes on from; `resume.round` is the step."""
    step = resume.round
    try:
        data = storage.get_bytes(epoch_checkpoint_key(run_id, step))
    except (FileNotFoundError, KeyError):
        raise EpochCheckpointUnusable(f"The checkpoint of step {step} is missing; the run cannot resume.") from None
    if hashlib.sha256(data).hexdigest() != resume.sha256:
        raise EpochCheckpointUnusable(f"The checkpoint of step {step} does not match its checksum; it was not used.")
    folder = Path(output_dir) / f"checkpoint-{step}"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(folder, filter="data")  # names inside the folder only, plain files
    return str(folder)

