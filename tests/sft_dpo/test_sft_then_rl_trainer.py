"""The 000 recipe on the tiny model, in the trainer: SFT on Math Pairs conversations, then RL from its adapter
scores higher at round 0 than RL from the base model; DPO on pairs (chosen right, rejected wrong) keeps an adapter."""

from __future__ import annotations

import pytest

from trainer.dpo import build_dpo_trainer
from trainer.loop import run as run_rl
from trainer.sft import build_sft_trainer
from trainer.spec import RunSpec
from trainer.tiny_model import math_pairs_rows
from trainer.tune_spec import TuneSpec
from trainer.tuning import run_tuning

pytestmark = pytest.mark.slow
NO_LIMIT = 4_102_444_800


def tune_spec(model_dir, storage, objective: str, rows: list[dict], **settings) -> TuneSpec:
    return TuneSpec.from_dict({
        "run_id": f"{objective}-1", "objective": objective, "model": {"path_or_id": str(model_dir)},
        "train_rows": rows, "validation_rows": rows[:16], "storage": {"location": str(storage)},
        "deadline": NO_LIMIT, "epochs": 1, "batch_size": 16, "micro_batch_size": 16, "training_window": 128,
        **settings,
    })


def rl_round_zero(model_dir, storage, run_id: str, start_adapter=None) -> float:
    records: list = []
    spec = RunSpec.from_dict({
        "run_id": run_id, "model": {"path_or_id": str(model_dir)}, "storage": {"location": str(storage)},
        "reward": {"config": {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}},
        "train_rows": math_pairs_rows(seed=11, count=64), "validation_rows": math_pairs_rows(seed=12, count=64),
        "deadline": NO_LIMIT, "rounds": 1, "prompts_per_round": 4, "answers_per_prompt": 4,
        "max_answer_tokens": 8, "training_window": 128, "micro_batch_size": 16, "learning_rate": 5e-4,
        "start_adapter": start_adapter,
    })
    run_rl(spec, records.append)
    return next(r.validation_reward for r in records if r.type == "round_scored" and r.round == 0)


def test_sft_lifts_the_tiny_model_and_rl_starts_from_its_adapter(tiny_model_dir, tmp_path):
    records: list = []
    spec = tune_spec(tiny_model_dir, tmp_path, "sft", math_pairs_rows(seed=21, count=128), learning_rate=2e-3, epochs=3)
    assert run_tuning(spec, build_sft_trainer, records.append)
    steps = [r for r in records if r.type == "step_logged"]
    assert [s.step for s in steps] == list(range(1, 25)) and steps[-1].steps == 24
    assert steps[-1].validation_loss is not None and steps[-1].loss < steps[0].loss
    saved = next(r for r in records if r.type == "adapter_saved")
    assert len(saved.sha256) == 64 and saved.size_bytes > 0 and records[-1].type == "completed"

    base = rl_round_zero(tiny_model_dir, tmp_path, "rl-base")
    start = {"path": saved.location, "sha256": saved.sha256, "size_bytes": saved.size_bytes}
    after_sft = rl_round_zero(tiny_model_dir, tmp_path, "rl-after-sft", start)
    assert after_sft > base, (base, after_sft)


def test_dpo_on_right_and_wrong_answers_keeps_an_adapter(tiny_model_dir, tmp_path):
    rows = [{**row, "rejected": str(int(row["reference"]) + 1)} for row in math_pairs_rows(seed=31, count=32)]
    records: list = []
    spec = tune_spec(tiny_model_dir, tmp_path, "dpo", rows, learning_rate=5e-4, batch_size=8, micro_batch_size=8)
    assert run_tuning(spec, build_dpo_trainer, records.append)
    assert [r.type for r in records][-2:] == ["adapter_saved", "completed"]
    assert len([r for r in records if r.type == "step_logged"]) == 4
