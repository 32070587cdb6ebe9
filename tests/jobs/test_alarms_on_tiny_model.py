"""Alarms provoked for real on the tiny model (issue 21): the trainer trains, each progress record becomes a domain
command as the jobs record it (jobs/recording.py), and the run's page shows the banner. The trainer is driven
directly, with a grader of the test's own where the alarm needs one, so its settings may go past the product's limits
(the run's saved settings stay within them: the alarm rules read those, e.g. Longest sampled answer, at least 16).

Every round rule is provoked for real, each seen as its Run.AlarmRaised event and its banner:
- no signal: a prompt set all too easy (every answer right), three rounds;
- answers growing: a reward that pays length, at 10x the product's highest learning rate;
- reward without validation: a reward that pays, on the training prompts only, answers ending in an even digit (at
  the product's highest learning rate), while on the validation prompts it pays the right answer;
- format without correct: a format-only reward (its correct part never pays) whose format part pays a shape the tiny
  model learns, an answer ending in an even digit (it never writes the <think>...</think><answer>...</answer> shape);
- entropy collapse: a reward that pays agreement (each prompt's most common answer), at 10x the product's highest
  learning rate and 4 Epochs, until the policy's answers are all alike.
And a healthy run raises none. The quiet run is the reconciler's (tests/jobs/test_quiet_run_alarm.py). The rules'
thresholds are those of domain/runs/alarms.py, unchanged; each test's settings were measured first (each test says
what was seen; the trainer is seeded, and a run on one machine gives the same rounds each time). Another CPU rounds
differently (and builds a slightly different tiny model), and a few rounds of RL carry that far: so each setting is
pushed past where the alarm first showed, and the alarm is read where the run ends (a standing one); where later
rounds may clear it, the run is stopped once it is raised (`trained(until=...)`). The entropy collapse was provoked
on Intel's CPUs only (tests/measured_cpus.py says what an AMD EPYC did)."""

from __future__ import annotations

import html
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from consoles import ClientConsole, client_console
from measured_cpus import measured_on_intel_only

from domain.actors import Actor
from domain.rewards.types import AnswerScore
from domain.runs import alarms
from domain.runs.settings import run_body_from_api
from jobs.recording import ProgressRecorder
from jobs.specs import training_spec
from trainer.tiny_model import math_pairs_rows
from verity.config import Settings

pytestmark = pytest.mark.slow

OWNER = Actor("person", "owner@localhost", "owner@localhost")
TINY = {"prompts_per_round": 8, "answers_per_prompt": 8, "max_answer_tokens": 16,
        "reward": {"preset": "verifiable", "metric": "math_pairs", "format_bonus": False}}
ADVANCED = {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128, "seed": 0}
TRAIN_ROWS = math_pairs_rows(seed=11, count=256)
VALIDATION_ROWS = math_pairs_rows(seed=12, count=16)
VALIDATION_REFERENCES = frozenset(row["reference"] for row in VALIDATION_ROWS)


class PaysEveryAnswer:
    """A prompt set all too easy for the model: every answer it samples is right."""

    label = "Every answer right · test"

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        return [AnswerScore(value=1.0) for _ in answers]


class PaysLength:
    """A reward that pays answer length: a full score for `full` characters or more."""

    label = "Length · test"

    def __init__(self, full: int) -> None:
        self.full = full

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        return [AnswerScore(min(len(answer) / self.full, 1.0)) for answer in answers]


class PaysEvenEndingsOnTraining:
    """A reward that pays, on the training prompts, an answer ending in an even digit (right or not); on the
    validation prompts it pays the right answer, as Math Pairs does. What training learns, validation does not pay."""

    label = "Even endings · test"

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        return [
            AnswerScore(float(answer.strip() == reference)) if reference in VALIDATION_REFERENCES
            else AnswerScore(float(answer.strip()[-1:] in tuple("02468")))
            for answer, reference in zip(answers, references, strict=True)
        ]


class PaysTheShapeOnly:
    """A format-only reward, in the built-in task's parts (0.9 x correct + 0.1 x format): its correct part never
    pays, and its format part pays a shape the tiny model can learn, an answer ending in an even digit (it never
    writes the <think>...</think><answer>...</answer> shape; a three-character answer or one starting with 1 it did
    not learn in 6 rounds: whether the answer has them depends on the sum asked more than on the policy)."""

    label = "Shape only · test"

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        shaped = [float(answer.strip()[-1:] in tuple("02468")) for answer in answers]
        return [AnswerScore(0.1 * f, parts={"correct": 0.0, "format": f}) for f in shaped]


class PaysTheMajority:
    """A reward that pays agreement: an answer scores 1 when it is its prompt's most common answer (a majority vote
    in place of a reference, as some label-free rewards do). The policy learns to agree with itself."""

    label = "Majority · test"

    def score_batch(self, answers: Sequence[str], references: Sequence[str]) -> list[AnswerScore]:
        votes: dict[str, Counter[str]] = {}
        for answer, reference in zip(answers, references, strict=True):
            votes.setdefault(reference, Counter())[answer.strip()] += 1
        return [
            AnswerScore(float(answer.strip() == votes[reference].most_common(1)[0][0]))
            for answer, reference in zip(answers, references, strict=True)
        ]


def trained(console: ClientConsole, tiny_model_dir: Path, storage: Path, rounds: int, grader: Any = None,
            rl: dict[str, Any] | None = None, past_limits: dict[str, Any] | None = None,
            until: str | None = None) -> UUID:
    """A run saved and launched in the console, trained on the tiny model, its records recorded as the jobs do.
    `rl` changes the run's saved settings (within the product's limits); `past_limits` the trainer's spec alone.
    `until`: the run stops (its time is up, through the trainer's clock) once that alarm is raised, as a person who
    saw the banner would stop it; a later round, on one CPU or another, may clear the alarm (what each CPU's rounds
    do after an alarm differs more than when it comes)."""
    from trainer.loop import run
    from trainer.spec import RunSpec

    body = {"name": "tiny", "training": {"rl": {**TINY, "rounds": rounds, **(rl or {})}, "advanced": ADVANCED}}
    verity = console.verity
    run_id = verity.save_run(console.org_id, console.project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(console.org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    settings = training_spec(verity.get_run(None, run_id).settings)
    spec = RunSpec.from_dict({
        "run_id": str(run_id), "model": {"path_or_id": str(tiny_model_dir)},
        "reward": {"config": body["training"]["rl"]["reward"]},
        "train_rows": TRAIN_ROWS, "validation_rows": VALIDATION_ROWS,
        "storage": {"location": str(storage)}, "deadline": 4_102_444_800,
        **{key: asdict(value) if is_dataclass(value) else value for key, value in settings.items()},
        **(past_limits or {}),
    })
    recorder = ProgressRecorder(verity, run_id)
    stopped = False

    def record(progress: Any) -> None:
        nonlocal stopped
        recorder.record(progress)
        stopped = stopped or (until is not None and until in kinds(console, run_id))

    def clock() -> float:
        return time.time() + (10**10 if stopped else 0)  # past the deadline once `until` is raised

    run(spec, emit=record, grader=grader, clock=clock)
    console.settle()
    return run_id


def raised(console: ClientConsole, run_id: UUID) -> list[tuple[str, int]]:
    """The run's Run.AlarmRaised events: (kind, the round it was raised after)."""
    return [(e.kind, e.round) for e in console.verity.events.get(run_id)  # type: ignore[attr-defined]
            if type(e).__name__ == "AlarmRaised"]


def kinds(console: ClientConsole, run_id: UUID) -> list[str]:
    return [kind for kind, _ in raised(console, run_id)]


def figures(console: ClientConsole, run_id: UUID) -> str:
    """The run's rounds as the alarm rules read them, oldest first, a line each: what a failing test says it saw."""
    return "\n".join([
        f"round {r.round_number}: reward {r.reward}, validation {r.validation_reward}, signal {r.signal}, cut off "
        f"{r.cut_off}, tokens {r.mean_answer_tokens}, entropy {r.token_entropy}, accuracy {r.accuracy}"
        for r in reversed(console.read_models.rounds(console.org_id, run_id))
    ])


def banner(console: ClientConsole, run_id: UUID, kind: str) -> str:
    """The run page's banner of an alarm standing: its words."""
    page = console.client.get(f"/runs/{run_id}").text
    assert f'data-alarm="{kind}"' in page, page
    return html.unescape(page.split(f'data-alarm="{kind}"', 1)[1].split("</div>", 1)[0])


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
    # the reward's health: each trained round's grading seconds per answer, measured as the trainer graded them
    trained_rounds = [r for r in console.read_models.rounds(console.org_id, run_id) if r.round_number >= 1]
    assert len(trained_rounds) == 3
    for r in trained_rounds:
        assert r.grading_seconds_median is not None and r.grading_seconds_p95 is not None
        assert 0 < r.grading_seconds_median <= r.grading_seconds_p95 < 1, r


def test_a_reward_that_pays_length_raises_the_answers_growing_alarm_and_its_banner(
    console: ClientConsole, tiny_model_dir: Path, tmp_path: Path
) -> None:
    # measured: answers of 3.7 tokens on average in rounds 1-2 and 2.7 in round 3, then every answer cut off at 16 in
    # round 4 (raised after it) and 95% in round 5; the rule wants 80% of 16 tokens, or 20% cut off and 10 points more
    # than in the window's first. At 3e-3 (3x) another machine's numbers grew by round 3, this one's not in 5 rounds
    run_id = trained(console, tiny_model_dir, tmp_path, rounds=8, grader=PaysLength(16),
                     past_limits={"learning_rate": 1e-2}, until=alarms.ANSWERS_GROWING)
    assert alarms.ANSWERS_GROWING in kinds(console, run_id), figures(console, run_id)
    words = banner(console, run_id, alarms.ANSWERS_GROWING)
    assert "Alarm · Answers grow towards the limit" in words and "towards the Longest sampled answer of 16" in words
    assert "If the reward pays for length, change it" in words


def test_a_reward_that_validation_does_not_pay_raises_the_reward_without_validation_alarm_and_its_banner(
    console: ClientConsole, tiny_model_dir: Path, tmp_path: Path
) -> None:
    # measured: reward 0.48 over rounds 1-2, 0.63 over rounds 4-5 (the rule wants a rise of 0.10) while validation
    # went from 0.38 to 0.25, raised after round 5, the last (on another machine: 0.44 to 0.66, validation 0.34 to
    # 0.22). A 6th round may clear it (this machine's round 6 paid 0.66 on validation 0.31), so the run ends there
    run_id = trained(console, tiny_model_dir, tmp_path, rounds=5, grader=PaysEvenEndingsOnTraining(),
                     past_limits={"learning_rate": 1e-3})
    assert alarms.REWARD_WITHOUT_VALIDATION in kinds(console, run_id), figures(console, run_id)
    words = banner(console, run_id, alarms.REWARD_WITHOUT_VALIDATION)
    assert "Alarm · Reward rises, validation does not" in words and "while validation reward went from" in words


def test_a_format_only_reward_raises_the_format_without_correct_alarm_and_its_banner(
    console: ClientConsole, tiny_model_dir: Path, tmp_path: Path
) -> None:
    with_format = {"reward": {**TINY["reward"], "format_bonus": True}}  # the rule reads a task with Format bonus
    # measured: the format part (even endings) from 52% of answers over rounds 1-2 (and 2-3) to 87% over rounds 4-5 and
    # 84% over rounds 5-6 (the rule wants 30 points) while the correct part stayed at 0%; at the product's learning
    # rate (1e-3) it rose too slowly for 6 rounds
    run_id = trained(console, tiny_model_dir, tmp_path, rounds=6, grader=PaysTheShapeOnly(), rl=with_format,
                     past_limits={"learning_rate": 2e-3})
    assert alarms.FORMAT_WITHOUT_CORRECT in kinds(console, run_id), figures(console, run_id)
    words = banner(console, run_id, alarms.FORMAT_WITHOUT_CORRECT)
    assert "Alarm · Format rises, correct answers do not" in words
    assert "while the correct part went from 0% to 0%" in words


@measured_on_intel_only(
    "the entropy never fell under a quarter of its peak (the alarm's rule): at 1e-2 it rose to 4.4 with answers at the "
    "limit; at 3e-3 over 16 rounds, 5e-3 and 7e-3 over 12, its lowest was 41% to 70% of its peak, and the runs raised "
    "answers growing or reward without validation instead"
)
def test_a_learning_rate_past_the_limit_collapses_the_entropy_and_raises_its_alarm_and_banner(
    console: ClientConsole, tiny_model_dir: Path, tmp_path: Path
) -> None:
    # measured: entropy 2.22 in round 2 (the run's highest), then one-token answers: rounds 4-6 have no signal (no
    # update, so no entropy; the no-signal alarm is raised after round 6), and rounds 7-8's few differing answers
    # train at entropy 0.128 and 0.116, under a quarter of 2.22 (0.555): raised after round 7, standing at the end,
    # with this CPU's own kernels and with AVX2's (ATEN_CPU_CAPABILITY=avx2, MKL and oneDNN likewise). Another
    # machine collapsed by round 6; a round with no signal ends the alarm (no entropy to read), so 2e-2, where
    # AVX2's round 8 had none, is no safer. At 5e-3 the answers ran to the limit instead, and a correct-answer
    # reward at 3e-3 to 1e-2 broke the model (no signal) without lowering its entropy
    run_id = trained(console, tiny_model_dir, tmp_path, rounds=10, grader=PaysTheMajority(), rl={"epochs": 4},
                     past_limits={"learning_rate": 1e-2}, until=alarms.ENTROPY_COLLAPSE)
    assert alarms.ENTROPY_COLLAPSE in kinds(console, run_id), figures(console, run_id)
    words = banner(console, run_id, alarms.ENTROPY_COLLAPSE)
    assert "Alarm · The policy's entropy is collapsing" in words and "Lower the Learning rate" in words
