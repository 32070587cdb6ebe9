"""One round of an RL run: sample → score → update → validate, keeping the adapter if it validated best so far;
→ the round's progress record, and its scored answers for the rollout file.

Each stage may cut the round short (trainer/endings.py's ROUND_CUT_SHORT): the time limit while sampling or
updating, memory running out, or the metric failing on more than a tenth of the answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from domain.rewards.types import Grader
from trainer.endings import too_many_metric_failures
from trainer.failures import RoundInterrupted, TooManyMetricFailures
from trainer.grpo_update import UpdateResult, update_policy
from trainer.model_loading import Policy, peak_memory_bytes
from trainer.progress import PhaseSeconds, RoundScored
from trainer.prompt_summary import prompt_summary
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


def play_round(setup: RoundSetup, round_number: int, rounds: int, state: RunState) -> tuple[RoundScored, ScoredRound]:
    spec, policy, clock = setup.spec, setup.policy, setup.clock

    t = clock()
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
    validated = validate(setup)
    validation_reward = float(validated.rewards.mean())
    validation_seconds = clock() - t
    state.keep_if_best(round_number, validation_reward, policy)

    # to a tenth of a millisecond: grading a small round of a built-in reward takes under a millisecond
    seconds = PhaseSeconds(
        round(sampling_seconds, 4), round(grading_seconds, 4), round(update_seconds, 4), round(validation_seconds, 4)
    )
    record = round_record(round_number, rounds, scored, update, validation_reward, state.best_round, seconds,
                          peak_memory_bytes(policy.device))
    return record, scored


def validate(setup: RoundSetup) -> ScoredRound:
    """The validation sample scored, with the model's most likely answer to each prompt (its mean is the
    validation reward)."""
    spec = setup.spec
    answers = setup.backend.sample(
        [setup.validation_prompts[i] for i in setup.validation], 1, spec.max_answer_tokens, True, setup.should_stop
    )
    references = [spec.validation_rows[i].reference for i in setup.validation]
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
