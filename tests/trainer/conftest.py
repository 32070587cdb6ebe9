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
