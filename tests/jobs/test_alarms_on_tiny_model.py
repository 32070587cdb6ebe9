"""Alarms on real tiny-model runs (issue 21): the trainer trains, each progress record becomes a domain command as
the jobs record it (jobs/recording.py), and the run's page shows the banner. A prompt set that is all too easy (every
answer right) raises the no-signal alarm after three rounds; a healthy run raises none.

The other alarms are provoked with recorded rounds (tests/domain/test_run_alarms.py): within the product's learning
rates (at most 1e-3) the tiny model neither lengthens its answers nor loses its entropy in a few rounds, it cannot
write the <think>...</think><answer>...</answer> shape, and a reward outrunning validation takes more rounds than a
quick test has."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from consoles import ClientConsole, client_console

from domain.actors import Actor
from domain.rewards.types import AnswerScore
from domain.runs import alarms
from domain.runs.settings import run_body_from_api
from jobs.recording import ProgressRecorder
from jobs.specs import training_spec
from verity.config import Settings

pytestmark = pytest.mark.slow

OWNER = Actor("person", "owner@localhost", "owner@localhost")
TINY = {"prompts_per_round": 8, "answers_per_prompt": 8, "max_answer_tokens": 16,
        "reward": {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}}
ADVANCED = {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128, "seed": 0}


class PaysEveryAnswer:
    """A prompt set all too easy for the model: every answer it samples is right."""

    label = "Every answer right · test"

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        return [AnswerScore(value=1.0) for _ in answers]


def trained(console: ClientConsole, tiny_model_dir: Path, storage: Path, rounds: int, grader: Any = None) -> UUID:
    """A run saved and launched in the console, trained on the tiny model, its records recorded as the jobs do."""
    from trainer.loop import run
    from trainer.spec import RunSpec
    from trainer.tiny_model import math_pairs_rows

    body = {"name": "tiny", "training": {"rl": {**TINY, "rounds": rounds}, "advanced": ADVANCED}}
    verity = console.verity
    run_id = verity.save_run(console.org_id, console.project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(console.org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    settings = training_spec(verity.get_run(None, run_id).settings)
    spec = RunSpec.from_dict({
        "run_id": str(run_id), "model": {"path_or_id": str(tiny_model_dir)},
        "reward": {"config": TINY["reward"]},
        "train_rows": math_pairs_rows(seed=11, count=256), "validation_rows": math_pairs_rows(seed=12, count=16),
        "storage": {"location": str(storage)}, "deadline": 4_102_444_800,
        **{key: asdict(value) if is_dataclass(value) else value for key, value in settings.items()},
    })
    recorder = ProgressRecorder(verity, run_id)
    run(spec, emit=recorder.record, grader=grader)
    console.settle()
    return run_id


@pytest.fixture
def console(sqlite_settings: Settings):
    with client_console(sqlite_settings, ClientConsole) as console:
        yield console


def test_a_prompt_set_all_too_easy_raises_the_no_signal_alarm_and_its_banner(
    console: ClientConsole, tiny_model_dir: Path, tmp_path: Path
) -> None:
    run_id = trained(console, tiny_model_dir, tmp_path, rounds=3, grader=PaysEveryAnswer())
    events = [e for e in console.verity.events.get(run_id) if type(e).__name__ == "AlarmRaised"]
    assert [(e.kind, e.round) for e in events] == [(alarms.NO_SIGNAL, 3)]  # type: ignore[attr-defined]
    assert events[0].seen == (  # type: ignore[attr-defined]
        "Rounds 1-3 had no signal: every answer to each prompt scored alike (mean reward 1.00: all right), so they "
        "taught nothing."
    )
    run = console.read_models.run(console.org_id, run_id)
    assert run.state == "failed" and [a["kind"] for a in run.alarms] == [alarms.NO_SIGNAL]  # no round learned
    page = console.client.get(f"/runs/{run_id}").text
    assert 'data-alarm="no_signal"' in page and "Alarm · No learning signal" in page
    assert "The prompts are all too easy or all too hard for the model." in page


def test_a_healthy_tiny_run_raises_no_alarm(console: ClientConsole, tiny_model_dir: Path, tmp_path: Path) -> None:
    run_id = trained(console, tiny_model_dir, tmp_path, rounds=3)  # every round rule is read by round 3
    assert [e for e in console.verity.events.get(run_id) if type(e).__name__.startswith("Alarm")] == []
    run = console.read_models.run(console.org_id, run_id)
    assert run.state == "completed" and run.alarms == []
    assert "run-alarms" not in console.client.get(f"/runs/{run_id}").text
