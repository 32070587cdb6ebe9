"""An SFT or DPO run leaves a checkpoint at the end of each epoch but its last (trainer/tune_checkpoints.py), and
one whose worker died after an epoch goes on from that epoch's checkpoint as the run that never stopped: the steps
after it are redone with the same losses and validation losses, and the kept adapter is the same. A run that trained
all its epochs keeps no checkpoint; one that does not match its checksum is never used."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file
from trainer_specs import tune_settings

from trainer.dpo import build_dpo_trainer
from trainer.sft import build_sft_trainer
from trainer.spec import ResumeFrom
from trainer.tiny_model import math_pairs_rows
from trainer.tune_checkpoints import epoch_checkpoint_key
from trainer.tune_spec import TuneSpec
from trainer.tuning import run_tuning

pytestmark = pytest.mark.slow
NO_LIMIT = 4_102_444_800
BUILDERS = {"sft": build_sft_trainer, "dpo": build_dpo_trainer}
EPOCHS, ROWS, BATCH = 3, 16, 8  # two optimizer steps an epoch: steps 2 and 4 end epochs 1 and 2


class WorkerDied(BaseException):
    """What a killed worker looks like to the run: nothing after this point happens."""


def _spec(model_dir, storage, objective: str) -> TuneSpec:
    rows = math_pairs_rows(seed=31, count=ROWS)
    if objective == "dpo":
        rows = [{**row, "rejected": str(int(row["reference"]) + 1)} for row in rows]
    settings = {"epochs": EPOCHS, "batch_size": BATCH, "micro_batch_size": BATCH, "training_window": 128,
                "learning_rate": 5e-4}
    return TuneSpec.from_dict({
        "run_id": f"{objective}-1", "objective": objective, "model": {"path_or_id": str(model_dir)},
        "train_rows": rows, "validation_rows": rows[:8], "storage": {"location": str(storage)},
        "deadline": NO_LIMIT, **tune_settings(len(rows), objective=objective, **settings),
    })


def _steps(records: list) -> list[tuple]:
    return [(r.step, pytest.approx(r.loss, rel=1e-4, abs=1e-5),
             None if r.validation_loss is None else pytest.approx(r.validation_loss, rel=1e-4, abs=1e-5))
            for r in records if r.type == "step_logged"]


@pytest.mark.parametrize("objective", ["sft", "dpo"])
def test_a_run_lost_after_an_epoch_goes_on_from_its_checkpoint_as_if_it_never_stopped(
    tiny_model_dir, tmp_path, objective: str
) -> None:
    whole: list = []
    whole_spec = _spec(tiny_model_dir, tmp_path / "whole", objective)
    assert run_tuning(whole_spec, BUILDERS[objective], whole.append)
    assert list((tmp_path / "whole" / "runs" / whole_spec.run_id / "checkpoints").iterdir()) == []  # none kept

    before: list = []

    def dies_in_step_3(record) -> None:
        before.append(record)
        if record.type == "step_logged" and record.step == 3:
            raise WorkerDied  # step 3 was logged; the checkpoint is epoch 1's, at step 2

    spec = _spec(tiny_model_dir, tmp_path / "lost", objective)
    with pytest.raises(WorkerDied):
        run_tuning(spec, BUILDERS[objective], dies_in_step_3)
    ended_epoch_1 = next(r for r in before if r.type == "step_logged" and r.step == 2)
    assert ended_epoch_1.validation_loss is not None and ended_epoch_1.checkpoint_sha256
    assert not [r for r in before if r.type == "step_logged" and r.step != 2 and r.checkpoint_sha256]
    folder = tmp_path / "lost" / "runs" / spec.run_id / "checkpoints"
    assert sorted(p.name for p in folder.iterdir()) == ["step-000002.tar"]

    tampered = tmp_path / "tampered"
    shutil.copytree(tmp_path / "lost", tampered)
    after: list = []
    assert run_tuning(replace(spec, resume=ResumeFrom(round=2, sha256=ended_epoch_1.checkpoint_sha256)),
                      BUILDERS[objective], after.append)

    assert [r.step for r in after if r.type == "step_logged"] == [3, 4, 5, 6]  # step 3 redone, nothing before it
    assert _steps([r for r in before if r.type == "step_logged" and r.step <= 2] + after) == _steps(whole)
    kept = load_file(tmp_path / "lost" / "runs" / spec.run_id / "adapter" / "adapter_model.safetensors")
    kept_whole = load_file(tmp_path / "whole" / "runs" / spec.run_id / "adapter" / "adapter_model.safetensors")
    assert kept.keys() == kept_whole.keys()
    assert all(torch.allclose(kept[name], kept_whole[name], rtol=0, atol=1e-5) for name in kept)
    assert list(folder.iterdir()) == []  # trained all its epochs: no checkpoint left

    (tampered / epoch_checkpoint_key(spec.run_id, 2)).write_bytes(b"not the checkpoint")
    refused: list = []
    assert not run_tuning(replace(spec, storage=replace(spec.storage, location=str(tampered)),
                                  resume=ResumeFrom(round=2, sha256=ended_epoch_1.checkpoint_sha256)),
                          BUILDERS[objective], refused.append)
    assert refused[-1].message == "The checkpoint of step 2 does not match its checksum; it was not used."
