"""From a launched SFT, DPO or Head run to the trainer's TuneSpec: the version's rows (DPO's rejected answers too),
the settings of its objective, the starting adapter, the deadline. The pieces are the RL spec's (jobs/specs.py);
the trial's rule (one epoch on the first 8 training examples, validated on 8) is applied here, from the domain's."""

from __future__ import annotations

from typing import Any

from domain.application import Verity
from domain.runs.run import Run
from domain.runs.run_settings import RunSettings
from jobs.config import JobsConfig
from jobs.specs import _start_adapter, dataset_rows, deadline_of, run_revision, storage_of
from trainer.spec import ModelRef, ResumeFrom, Storage
from trainer.tune_spec import FullTuning, TuneRow, TuneSpec
from verity.config import Settings


def _rows(rows: list[dict]) -> list[TuneRow]:
    return [TuneRow(prompt=list(r["prompt"]), reference=r["reference"], rejected=r.get("rejected")) for r in rows]


def build_tune_spec(
    verity: Verity, run: Run, settings: Settings, config: JobsConfig, storage: Storage | None = None, **_: object
) -> TuneSpec:
    """The spec the trainer reads; raises SpecUnbuildable with the failure's words. `storage` as build_run_spec's."""
    chosen = run.settings
    train_rows, validation_rows = dataset_rows(verity, run, settings)
    return TuneSpec(
        run_id=str(run.id),
        objective=chosen.objective,  # type: ignore[arg-type]  # sft, dpo or head: jobs/launching.py chose
        model=ModelRef(path_or_id=run.model, revision=run_revision(verity, run)),
        train_rows=_rows(train_rows[: chosen.effective_training_examples]),
        validation_rows=_rows(validation_rows[: chosen.effective_validation_prompts]),
        storage=storage or storage_of(settings),
        deadline=deadline_of(verity, run, config),
        start_adapter=_start_adapter(verity, run),
        resume=ResumeFrom(**run.resume_from) if run.resume_from else None,  # the step that ended an epoch
        **tuning_spec(chosen, len(train_rows)),
    )


def tuning_spec(chosen: RunSettings, train_examples: int) -> dict[str, Any]:
    """What the trainer trains with, as TuneSpec's settings: the run's, with a trial's one epoch, and a trial's full
    run (its epochs over all `train_examples`) for its estimate."""
    return {
        "epochs": chosen.effective_epochs,
        "batch_size": chosen.batch_size,
        "beta": chosen.beta,
        # a micro batch larger than the batch takes the whole batch in one pass (the domain saves it so)
        "micro_batch_size": min(chosen.micro_batch_size, chosen.batch_size),
        "learning_rate": chosen.learning_rate,
        "training_window": chosen.training_window,
        "lora_rank": chosen.lora_rank,
        "lora_alpha": chosen.lora_alpha,
        "quantization": chosen.quantization,
        "seed": chosen.seed,
        "full_run": FullTuning(epochs=chosen.epochs, train_examples=train_examples) if chosen.is_trial else None,
    }
