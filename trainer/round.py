"""One round of an RL run: sample → score → update → validate, keeping the adapter if it validated best so far;
→ the round's progress record, and its scored answers for the rollout file.

The validation of a round and the sampling of the next use the same adapter, so they are one decode where the
backend can (`validate_and_sample_next`): the next round starts with its answers drawn.

Each stage may cut the round short (trainer/endings.py's ROUND_CUT_SHORT): the time limit while sampling or
updating, memory running out, or the metric failing on more than a tenth of the answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from domain.rewards.types import Grader
from trainer.endings import too_many_metric_failures
from trainer.failures import RoundInterrupted, TooManyMetricFailures
from trainer.grpo_update import UpdateResult, update_policy
from trainer.model_loading import Policy, peak_memory_bytes
from trainer.progress import PhaseSeconds, RoundScored
from trainer.prompt_summary import prompt_summary
from trainer.resume_point import resume_point
from trainer.run_state import RunState
from trainer.sampling import SampledAnswer, SamplingBackend, SamplingOutOfMemory, is_out_of_memory
from trainer.schedule import PromptSchedule
from trainer.scoring import ScoredRound, score_answers
from trainer.spec import RunSpec

Clock = Callable[[], float]


@dataclass(frozen=True)
class RoundSetup:
    """What every round uses, made once by the run before round 0. `validation` indexes the validation sample's
    prompts; `should_stop` says the time limit is too near to go on with a round."""

    spec: RunSpec
    policy: Policy
    backend: SamplingBackend
    optimizer: torch.optim.Optimizer
    grader: Grader
    schedule: PromptSchedule
    train_prompts: list[list[int]]
    validation_prompts: list[list[int]]
    validation: list[int]
    should_stop: Callable[[], bool]
    clock: Clock


@dataclass(frozen=True)
class NextRound:
    """The next round's answers, sampled with this round's validation sample in one decode (the same adapter): its
    prompts, its answers and its share of the decode's seconds."""

    indices: list[int]
    answers: list[list[SampledAnswer]]
    seconds: float


def play_round(setup: RoundSetup, round_number: int, rounds: int, state: RunState, ahead: NextRound | None = None,
               sample_next: Callable[[], bool] = lambda: False, replay: bool = False,
               ) -> tuple[RoundScored, ScoredRound, NextRound | None, dict[str, Any]]:
    """The round, from its answers sampled with the last round's validation (`ahead`) or now. After the update,
    where `sample_next()` says the next round will start, the next round's answers are sampled with this round's
    validation. `replay`: a resumed run's first round, whose answers the run that wrote the checkpoint sampled with
    its validation: the same decode is made again, for the same answers, and its validation left out.
    → the record, the scored answers, the next round's answers (or None), and the generators and schedule as they
    were before the next round's draws (what the round's checkpoint holds: trainer/resume_point.py)."""
    spec, policy, clock = setup.spec, setup.policy, setup.clock

    t = clock()
    if ahead is None and replay:
        _, ahead, _ = validate_and_sample_next(setup)
    if ahead is not None:
        indices, answers, sampling_seconds = ahead.indices, ahead.answers, ahead.seconds
    else:
        indices = setup.schedule.next_round()
        answers = _sample(setup, indices)
        sampling_seconds = clock() - t

    # cut-off answers score 0 without being graded
    t = clock()
    scored = score_answers(policy.tokenizer, setup.grader, answers, [spec.train_rows[i].reference for i in indices])
    scored.indices = indices
    grading_seconds = clock() - t
    too_many = too_many_metric_failures(spec, setup.grader, scored, round_number)
    if too_many is not None:
        raise TooManyMetricFailures(too_many, scored)
    if setup.should_stop():
        raise RoundInterrupted

    # advantages, skip uniform groups, batch, loss, step
    t = clock()
    update = update_policy(spec, policy, setup.optimizer, setup.train_prompts, scored, setup.should_stop)
    setup.backend.adapter_changed()
    update_seconds = clock() - t
    state.count_signal(update.updated, scored.rewards)

    t = clock()
    point = resume_point(setup.backend, setup.schedule)
    if sample_next():
        validated, ahead, validation_seconds = validate_and_sample_next(setup)
    else:
        validated, ahead = validate(setup), None
        validation_seconds = clock() - t
    validation_reward = float(validated.rewards.mean())
    state.keep_if_best(round_number, validation_reward, policy)

    # to a tenth of a millisecond: grading a small round of a built-in reward takes under a millisecond
    seconds = PhaseSeconds(
        round(sampling_seconds, 4), round(grading_seconds, 4), round(update_seconds, 4), round(validation_seconds, 4)
    )
    record = round_record(round_number, rounds, scored, update, validation_reward, state.best_round, seconds,
                          peak_memory_bytes(policy.device))
    return record, scored, ahead, point


def validate(setup: RoundSetup) -> ScoredRound:
    """The validation sample scored, with the model's most likely answer to each prompt (its mean is the
    validation reward)."""
    spec = setup.spec
    answers = setup.backend.sample(
        [setup.validation_prompts[i] for i in setup.validation], 1, spec.max_answer_tokens, True, setup.should_stop
    )
    return _scored_validation(setup, answers)


def validate_and_sample_next(setup: RoundSetup) -> tuple[ScoredRound, NextRound | None, float]:
    """The validation sample scored and the next round's answers (the schedule moves on to it), sampled in one
    decode where the backend can (the validation's prompts read, and its steps taken, with the round's: most of
    what validating alone costs). → the validation, the next round, and the validation's seconds: its share of
    the decode's seconds by answers, and its grading.

    A backend that decodes one kind of answer at a time validates alone, and so does one that runs out of memory
    decoding both: the next round then samples its answers itself (None), as it always did."""
    spec, clock = setup.spec, setup.clock
    together = getattr(setup.backend, "sample_with_greedy", None)
    t = clock()
    if together is not None:
        position = setup.schedule.position()
        indices = setup.schedule.next_round()
        prompts = [setup.validation_prompts[i] for i in setup.validation]
        try:
            answers, likeliest = together([setup.train_prompts[i] for i in indices], spec.answers_per_prompt,
                                          prompts, spec.max_answer_tokens, setup.should_stop)
        except (RuntimeError, MemoryError) as error:
            if not (isinstance(error, SamplingOutOfMemory) or is_out_of_memory(error)):
                raise
            setup.schedule.restore(position)  # the next round draws its prompts itself
        else:
            decode_seconds = clock() - t
            share = len(prompts) / (len(prompts) + len(indices) * spec.answers_per_prompt)
            t = clock()
            validated = _scored_validation(setup, likeliest)
            validation_seconds = share * decode_seconds + clock() - t
            return validated, NextRound(indices, answers, (1 - share) * decode_seconds), validation_seconds
        t = clock()
    validated = validate(setup)
    return validated, None, clock() - t


def _scored_validation(setup: RoundSetup, answers: list[list[SampledAnswer]]) -> ScoredRound:
    references = [setup.spec.validation_rows[i].reference for i in setup.validation]
    return score_answers(setup.policy.tokenizer, setup.grader, answers, references)


def round_record(round_number: int, rounds: int, scored: ScoredRound, update: UpdateResult, validation_reward: float,
                 best_round: int, seconds: PhaseSeconds, peak_memory: int) -> RoundScored:
    flat = [a for group in scored.answers for a in group]
    return RoundScored(
        round=round_number,
        rounds=rounds,
        reward=float(scored.rewards.mean()),
        signal=update.signal,
        cut_off=sum(a.cut_off for a in flat) / len(flat),
        metric_failures=scored.failed,
        graded_answers=scored.graded,
        failure_kinds=scored.failure_kinds,
        failures_by_kind=scored.failures_by_kind,
        sandbox_batches=scored.sandbox_batches,
        grading_seconds_median=scored.grading_seconds_median,
        grading_seconds_p95=scored.grading_seconds_p95,
        updated=update.updated,
        loss=update.loss,
        validation_reward=validation_reward,
        best_round=best_round,
        seconds=seconds,
        mean_answer_tokens=sum(len(a.token_ids) for a in flat) / len(flat),
        token_entropy=update.token_entropy,
        peak_memory_bytes=peak_memory,
        accuracy=scored.accuracy,
        clipped=update.clipped,
        grad_norm=update.grad_norm,
        passes=update.passes,
        prompts=prompt_summary(scored),
    )


def _sample(setup: RoundSetup, indices: list[int]) -> list[list[SampledAnswer]]:
    """`answers_per_prompt` answers to each of the round's prompts, at temperature 1. → [prompts][answers]"""
    spec = setup.spec
    try:
        return setup.backend.sample(
            [setup.train_prompts[i] for i in indices], spec.answers_per_prompt, spec.max_answer_tokens, False,
            setup.should_stop,
        )
    except (RuntimeError, MemoryError) as error:
        if is_out_of_memory(error):
            raise SamplingOutOfMemory(str(error)) from error
        raise
