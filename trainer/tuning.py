"""An SFT, DPO or Head run on a LoRA adapter, with TRL's trainers (transformers' for Head): what they share.

Head is SFT's data and loss on a LoRA adapter of the output head alone (trainer/output_head.py), trained by
transformers' Trainer (trainer/head.py), since TRL's trainers leave an adapter on the head out of their loss.

The policy comes from model_loading (a new adapter, or a finished run's adapter checked against its checksum), TRL
trains it, a callback turns TRL's logs into `step_logged` records and stops at the time limit, and the adapter of
the last step is saved exactly as RL saves its best one (adapter_store). trainer/sft.py and trainer/dpo.py build
their TRL trainer; this module does the rest. TRL on a CPU: no bf16, no checkpointing, no reports, no downloads.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback

from domain.runs.time_limit import must_stop_running_round
from trainer.adapter_store import store_adapter
from trainer.failures import RunFailed
from trainer.model_loading import (
    PolicyUnloadable,
    StartAdapterMismatch,
    load_policy,
    load_tokenizer,
    memory_total_bytes,
    peak_memory_bytes,
)
from trainer.output_head import peft_model_trains_head
from trainer.progress import (
    Completed,
    Emit,
    Failed,
    JsonLinesEmitter,
    PhaseSeconds,
    Prepared,
    StepLogged,
    Stopped,
    TrialReport,
)
from trainer.storage import open_storage
from trainer.tune_checkpoints import EpochCheckpoints, unpack_checkpoint
from trainer.tune_spec import TuneSpec

log = logging.getLogger(__name__)
NAMES = {"sft": "SFT", "dpo": "DPO", "head": "Head"}
TRL_LEAVES_HEAD_OUT = (
    "{name} can't continue an adapter that trains the output head (a Head run's, or one started from it): its "
    "trainer computes the loss from the head's own weight and would leave that part out. Start RL from it instead."
)


class StepReporter(TrainerCallback):
    """TRL logs a step's loss, then (at an epoch's end) the validation loss: one record per step, with both."""

    def __init__(self, emit: Emit, deadline: float, clock: Callable[[], float] = time.time,
                 checkpoints: bool = False) -> None:
        """`checkpoints`: each epoch's checkpoint is saved after its validation (trainer/tune_checkpoints.py), so
        the record of the step that ended it waits for the checkpoint's sha256."""
        self.emit = emit
        self.checkpoints = checkpoints
        self.deadline = deadline
        self.clock = clock
        self.started = time.monotonic()
        self.pending: StepLogged | None = None
        self.last: StepLogged | None = None
        self.stopped_by_time = False

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "loss" in logs:
            self.flush()
            self.pending = StepLogged(
                step=state.global_step, steps=state.max_steps, epoch=round(float(state.epoch or 0), 4),
                loss=float(logs["loss"]), seconds=round(time.monotonic() - self.started, 3),
            )
        elif "eval_loss" in logs and self.pending is not None:
            self.pending = StepLogged(**{**self.pending.__dict__, "validation_loss": float(logs["eval_loss"])})
            if not self.checkpoints:
                self.flush()

    def on_step_end(self, args, state, control, **kwargs):
        if must_stop_running_round(self.clock(), self.deadline):  # keep 3 minutes to save the adapter
            self.stopped_by_time = True
            control.should_training_stop = True

    def flush(self, checkpoint_sha256: str | None = None) -> None:
        if self.pending is not None:
            if checkpoint_sha256 is not None:
                self.pending = replace(self.pending, checkpoint_sha256=checkpoint_sha256)
            self.emit(self.pending)
            self.last, self.pending = self.pending, None


def common_args(spec: TuneSpec, output_dir: str, steps_per_epoch: int) -> dict[str, Any]:
    """The TrainingArguments both objectives share. A full run saves a checkpoint at each epoch's end, after its
    validation (trainer/tune_checkpoints.py); a trial saves none, as it is never resumed."""
    saves = spec.full_run is None
    return {
        "output_dir": output_dir,
        "num_train_epochs": spec.epochs,
        "per_device_train_batch_size": spec.micro_batch_size,
        "per_device_eval_batch_size": spec.micro_batch_size,
        "gradient_accumulation_steps": spec.accumulation_steps,
        "learning_rate": spec.learning_rate,
        "lr_scheduler_type": "constant",
        "max_length": spec.training_window,
        "logging_steps": 1,
        "eval_strategy": "steps",
        "eval_steps": max(1, steps_per_epoch),  # once per epoch, on the last step's log
        "save_strategy": "steps" if saves else "no",
        "save_steps": max(1, steps_per_epoch),
        "report_to": "none",
        "disable_tqdm": True,
        "bf16": torch.cuda.is_available(),
        "fp16": False,
        "use_cpu": not torch.cuda.is_available(),
        "activation_checkpointing": False,
        "seed": spec.seed,
        "dataloader_num_workers": 0,
    }


TrainerBuilder = Callable[..., Any]  # (spec, model, tokenizer, train_rows, validation_rows, args, callbacks)


def run_tuning(spec: TuneSpec, build_trainer: TrainerBuilder, emit: Emit | None = None) -> bool:
    """Do the run; return whether it succeeded. Every outcome is also a progress record."""
    emit = emit if emit is not None else JsonLinesEmitter()
    torch.manual_seed(spec.seed)
    try:
        return _run(spec, build_trainer, emit)
    except (StartAdapterMismatch, PolicyUnloadable, RunFailed) as problem:
        emit(Failed(message=str(problem)))
    except Exception as error:  # any other error fails the run, in words that carry no data
        log.exception("the run failed")
        emit(Failed(message=f"{type(error).__name__}: training stopped; inspect logs"))
    return False


def _run(spec: TuneSpec, build_trainer: TrainerBuilder, emit: Emit) -> bool:
    started = time.monotonic()
    train_rows, validation_rows = spec.train_rows, spec.validation_rows
    tokenizer = load_tokenizer(spec)  # type: ignore[arg-type]  # it reads spec.model only
    tokenizer.padding_side = "right"
    trains = "head" if spec.objective == "head" else "linear"
    policy = load_policy(spec, tokenizer, trains)  # type: ignore[arg-type]  # model, quantization, adapter settings
    if trains == "linear" and peft_model_trains_head(policy.model):  # the domain refuses this start; say why here too
        raise PolicyUnloadable(TRL_LEAVES_HEAD_OUT.format(name=NAMES[spec.objective]))
    emit(Prepared(len(train_rows), len(validation_rows), round(time.monotonic() - started, 3)))
    full_run = spec.full_run is None
    reporter = StepReporter(emit, spec.deadline, checkpoints=full_run)
    storage = open_storage(spec.storage)
    resumed_from = spec.resume.round if spec.resume is not None else None
    callbacks: list[Any] = [reporter]
    if full_run:
        callbacks.append(checkpoints := EpochCheckpoints(spec.run_id, storage, reporter, resumed_from))
    with tempfile.TemporaryDirectory(prefix="verity-tune-") as output_dir:
        steps_per_epoch = -(-len(train_rows) // spec.batch_size)
        args = common_args(spec, output_dir, steps_per_epoch)
        trainer = build_trainer(spec, policy.model, tokenizer, train_rows, validation_rows, args, callbacks)
        trainer.remove_callback(PrinterCallback)  # stdout carries progress records only
        start = unpack_checkpoint(storage, spec.run_id, spec.resume, output_dir) if spec.resume else None
        trained = time.monotonic()
        trainer.train(resume_from_checkpoint=start)
        train_seconds = time.monotonic() - trained
    reporter.flush()
    last = reporter.last
    if last is None:
        emit(Failed(message=f"{NAMES[spec.objective]} trained no step: the time limit came first."))
        return False
    if reporter.stopped_by_time and not spec.trial:
        line = f"{NAMES[spec.objective]} stopped (time_limit) after step {last.step} of {last.steps}."
        emit(Stopped("time_limit", last.step, last.steps, last.step, None, line))
    model = trainer.model
    emit(store_adapter(spec.run_id, storage, model, last.step))
    if full_run:  # once the adapter is saved whole: nothing will go on from an epoch's checkpoint
        checkpoints.discard()
    if spec.full_run is not None:  # a trial
        full_steps = -(-spec.full_run.train_examples // spec.batch_size) * spec.full_run.epochs
        device = policy.device
        emit(TrialReport(
            finished=True, formatting={"prompts_checked": len(train_rows), "problems": []},
            seconds_per_round=round(train_seconds, 3), peak_memory_bytes=peak_memory_bytes(device),
            memory_total_bytes=memory_total_bytes(device), seconds=PhaseSeconds(update=round(train_seconds, 3)),
            preparation_seconds=round(trained - started, 3),
            full_training_seconds=round(train_seconds / max(last.step, 1) * full_steps, 1),
            full_training_rounds=full_steps, full_gpu_cost=None,
        ))
    emit(Completed(rounds_done=last.step, best_round=last.step,
                   best_validation_reward=-(last.validation_loss or 0.0)))
    return True


def trainer_builder(objective: str) -> TrainerBuilder:
    """The trainer of an objective: TRL's for SFT and DPO, transformers' for Head (trainer/head.py)."""
    if objective == "head":
        from trainer.head import build_head_trainer

        return build_head_trainer
    if objective == "sft":
        from trainer.sft import build_sft_trainer

        return build_sft_trainer
    from trainer.dpo import build_dpo_trainer

    return build_dpo_trainer


def run_from_file(path: str) -> int:
    spec = TuneSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if run_tuning(spec, trainer_builder(spec.objective)) else 1
