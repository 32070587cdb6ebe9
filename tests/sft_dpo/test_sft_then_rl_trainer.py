"""DPO in the trainer on the tiny model: pairs (chosen right, rejected wrong) train an adapter step by step.

000's recipe, SFT then RL from its adapter scoring higher at round 0 than RL from the base model, is told whole
through the API in tests/e2e/test_sft_then_rl.py (one training of each kind keeps the suite's time down)."""

from __future__ import annotations

import pytest
from trainer_specs import tune_settings

from trainer.dpo import build_dpo_trainer
from trainer.tiny_model import math_pairs_rows
from trainer.tune_spec import TuneSpec
from trainer.tuning import run_tuning

pytestmark = pytest.mark.slow
NO_LIMIT = 4_102_444_800


def tune_spec(model_dir, storage, objective: str, rows: list[dict], **settings) -> TuneSpec:
    named = {"epochs": 1, "batch_size": 16, "micro_batch_size": 16, "training_window": 128, **settings}
    return TuneSpec.from_dict({
        "run_id": f"{objective}-1", "objective": objective, "model": {"path_or_id": str(model_dir)},
        "train_rows": rows, "validation_rows": rows[:16], "storage": {"location": str(storage)},
        "deadline": NO_LIMIT, **tune_settings(len(rows), objective=objective, **named),
    })


def test_dpo_on_right_and_wrong_answers_keeps_an_adapter(tiny_model_dir, tmp_path):
    rows = [{**row, "rejected": str(int(row["reference"]) + 1)} for row in math_pairs_rows(seed=31, count=32)]
    records: list = []
    spec = tune_spec(tiny_model_dir, tmp_path, "dpo", rows, learning_rate=5e-4, batch_size=8, micro_batch_size=8)
    assert run_tuning(spec, build_dpo_trainer, records.append)
    assert [r.type for r in records][-2:] == ["adapter_saved", "completed"]
    assert len([r for r in records if r.type == "step_logged"]) == 4
