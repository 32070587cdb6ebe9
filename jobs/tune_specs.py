"""From a launched SFT, DPO or Head run to the trainer's TuneSpec: the version's rows (DPO's rejected answers too),
the settings of its objective, the starting adapter, the deadline. The pieces are the RL spec's (jobs/specs.py)."""

from __future__ import annotations

from domain.application import Verity
from domain.runs.run import Run
from jobs.config import JobsConfig
from jobs.specs import _start_adapter, dataset_rows, deadline_of, run_revision, storage_of
from trainer.spec import ModelRef, Storage
from trainer.tune_spec import TuneRow, TuneSpec
from verity.config import Settings


def _rows(rows: list[dict]) -> list[TuneRow]:
    return [TuneRow(prompt=list(r["prompt"]), reference=r["reference"], rejected=r.get("rejected")) for r in rows]


def build_tune_spec(
    verity: Verity, run: Run, settings: Settings, config: JobsConfig, storage: Storage | None = None, **_: object
) -> TuneSpec:
    """The spec the trainer reads; raises SpecUnbuildable with the failure's words. `storage` as build_run_spec's."""
    training = run.settings["training"]
    objective = training["objective"]
    advanced, block = training["advanced"], training[objective]
    train_rows, validation_rows = dataset_rows(verity, run, settings)
    return TuneSpec(
        run_id=str(run.id),
        objective=objective,
        model=ModelRef(path_or_id=run.model, revision=run_revision(verity, run)),
        train_rows=_rows(train_rows),
        validation_rows=_rows(validation_rows),
        storage=storage or storage_of(settings),
        deadline=deadline_of(verity, run, config),
        start_adapter=_start_adapter(verity, run),
        epochs=int(block["epochs"]),
        batch_size=int(block["batch_size"]),
        beta=float(block.get("beta", 0.1)),
        # a micro batch larger than the batch takes the whole batch in one pass (the domain saves it so)
        micro_batch_size=min(int(advanced["micro_batch_size"]), int(block["batch_size"])),
        learning_rate=float(advanced["learning_rate"]),
        training_window=int(advanced["training_window"]),
        lora_rank=int(advanced["lora_rank"]),
        lora_alpha=int(advanced["lora_alpha"]),
        quantization=str(advanced["quantization"]),
        trial=run.is_trial,
        seed=int(advanced["seed"]),
    )
