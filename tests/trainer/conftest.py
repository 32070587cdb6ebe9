"""Fixtures of the trainer's tests: the tiny model (built once, cached at the repo root), a toy grader, specs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from trainer_specs import rl_settings, split_settings

from domain.rewards.types import AnswerScore

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY_MODEL_SEED = 0



class FinalNumberGrader:
    """A toy reward for tests: 1 when the answer's last number equals the reference, else 0."""

    label = "Final number · test"

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        scores = []
        for answer, reference in zip(answers, references, strict=True):
            numbers = re.findall(r"-?\d+", answer)
            scores.append(AnswerScore(value=1.0 if numbers and numbers[-1] == reference.strip() else 0.0))
        return scores


@pytest.fixture
def final_number_grader() -> FinalNumberGrader:
    return FinalNumberGrader()


TINY_RUN = {  # a run's settings the tiny model learns with in seconds
    "rounds": 4,
    "prompts_per_round": 8,
    "answers_per_prompt": 8,
    "max_answer_tokens": 8,
    "learning_rate": 5e-4,
    "micro_batch_size": 32,
    "training_window": 128,
    "seed": 0,
}


def make_spec(model_dir: Path, storage: str | dict, **settings):
    """A small run on the tiny model's Math Pairs task; `settings` override the run's settings (as the jobs turn
    them into the spec's: `trial=True` is a trial of that run, `full_time_limit_hours` its Time limit) or the
    spec's own (`validation_sample_size`, `deadline`, `reward`, ...)."""
    from trainer.spec import RunSpec
    from trainer.tiny_model import math_pairs_rows

    if "full_time_limit_hours" in settings:
        settings["time_limit_hours"] = settings.pop("full_time_limit_hours")
    chosen, spec_only = split_settings(settings)
    values = {
        "run_id": "run-1",
        "model": {"path_or_id": str(model_dir)},
        "reward": {"config": {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}},
        "train_rows": math_pairs_rows(seed=11, count=1024),
        "validation_rows": math_pairs_rows(seed=12, count=64),
        "storage": storage if isinstance(storage, dict) else {"location": str(storage)},
        "deadline": 4_102_444_800,  # 2100: no time limit in play
        **rl_settings(**{**TINY_RUN, **chosen}),
    }
    values.update(spec_only)
    return RunSpec.from_dict(values)


class Recorder(list):
    """Collects progress records as the run emits them."""

    def __call__(self, record) -> None:
        self.append(record)

    def of(self, kind: str) -> list:
        return [r for r in self if r.type == kind]

    @property
    def types(self) -> list[str]:
        return [r.type for r in self]


@pytest.fixture(scope="session")
def run_spec(tiny_model_dir):
    """make_spec bound to the tiny model: run_spec(storage, **settings)."""

    def build(storage, **settings):
        return make_spec(tiny_model_dir, storage, **settings)

    return build


@pytest.fixture
def records() -> Recorder:
    return Recorder()


@pytest.fixture(scope="module")
def adapted(tiny_model_dir):
    """(tokenizer, the tiny model with a LoRA adapter that changes its answers, 48 Math Pairs prompts, end ids): a
    new adapter's B is zero, which would make merging it, or sampling with it, the same as without it."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from trainer.tiny_model import math_pairs_rows
    from trainer.tokenizing import prompt_ids

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_model_dir),
        LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM"),
    )
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.01)
    prompts = [prompt_ids(tokenizer, row["prompt"]) for row in math_pairs_rows(seed=5, count=48)]
    end_ids = {tokenizer.convert_tokens_to_ids("<|im_end|>")}
    return tokenizer, model, prompts, end_ids
