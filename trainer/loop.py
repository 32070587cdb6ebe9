"""One RL run, as 000 describes it: check the rows and the reward, score round 0, then the rounds
(trainer/round.py: sample → score → update → validate), keeping the adapter of the best validation round, until
every round is done or an ending comes first (trainer/endings.py).

`run(spec, emit)` is the whole run; `python -m trainer run SPEC.json` calls it with progress on stdout.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from pathlib import Path

import torch

from domain.rewards.types import Grader
from domain.runs import messages
from domain.runs.time_limit import may_start_round, must_stop_running_round
from trainer.backends import BackendFactory, make_backend
from trainer.checkpoint import resume_from_checkpoint, write_checkpoint
from trainer.endings import ROUND_CUT_SHORT, Ending, end_round_cut_short, finish, stop, too_many_metric_failures
from trainer.failures import RoundInterrupted, RunFailed
from trainer.model_loading import PolicyUnloadable, StartAdapterMismatch, load_policy, load_tokenizer, peak_memory_bytes
from trainer.progress import Emit, Failed, JsonLinesEmitter, PhaseSeconds, Prepared, RoundScored
from trainer.reward import build_reward, try_reward_on_reference
from trainer.rollouts import write_rollouts
from trainer.round import Clock, NextRound, RoundSetup, play_round, validate_and_sample_next
from trainer.run_state import RunState
from trainer.sampling import SamplingInterrupted
from trainer.schedule import PromptSchedule, validation_sample
from trainer.spec import RunSpec
from trainer.storage import open_storage
from trainer.tokenizing import prompt_ids
from trainer.trial import format_check, trial_report

log = logging.getLogger(__name__)


def run_from_file(path: str) -> int:
    spec = RunSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if run(spec) else 1


def run(
    spec: RunSpec,
    emit: Emit | None = None,
    grader: Grader | None = None,
    clock: Clock = time.time,
    backend_factory: BackendFactory | None = None,
) -> bool:
    """Do the run; return whether it succeeded. Every outcome is also a progress record.

    `grader` replaces the spec's reward, `clock` the wall clock and `backend_factory` the sampling backend's
    choice: the seams a test or a benchmark uses; a run from a spec file uses none of them.
    """
    emit = emit if emit is not None else JsonLinesEmitter()
    torch.manual_seed(spec.seed)
    owned_grader = None
    try:
        if grader is None:
            try:
                grader = owned_grader = build_reward(spec.reward)
            except ValueError as problem:  # RewardUnusable, or the reward's settings refused, in words
                raise RunFailed(str(problem)) from None
        return _run(spec, emit, grader, clock, backend_factory or make_backend)
    except RunFailed as failure:
        emit(Failed(message=str(failure)))
        if spec.trial:  # the report shows what was measured, with no estimate
            emit(trial_report(spec, None, 0.0, peak_memory_bytes(torch.device("cpu")), None, {}, finished=False))
        return False
    except Exception as error:  # any other error fails the run, in words that carry no data
        log.exception("the run failed")
        emit(Failed(message=f"{type(error).__name__}: training stopped; inspect logs"))
        return False
    finally:
        if owned_grader is not None and hasattr(owned_grader, "close"):
            owned_grader.close()  # a custom metric's sandbox processes


def _run(spec: RunSpec, emit: Emit, grader: Grader, clock: Clock, backend_factory: BackendFactory) -> bool:
    setup, end = _prepare(spec, emit, grader, clock, backend_factory)
    state = RunState()
    ahead: NextRound | None = None  # the next round's answers, sampled with the last validation
    if spec.resume is not None:  # round 0 and the rounds up to the checkpoint's are recorded already
        resume_from_checkpoint(setup, state, end.storage, spec.resume)
        last_seconds, first_round = PhaseSeconds(), spec.resume.round + 1
    else:
        zero_seconds, ahead = _round_zero(setup, end, state)
        last_seconds, first_round = PhaseSeconds(validation=zero_seconds), 1
    for round_number in range(first_round, spec.rounds + 1):
        if not may_start_round(round_number, clock(), spec.deadline, state.slowest_round_seconds):
            return stop(end, state, "time_limit", None, None)
        round_started = clock()
        if setup.policy.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(setup.policy.device)

        def next_round_starts(following: int = round_number + 1, started: float = round_started) -> bool:
            """Whether the next round will start, as the check above will find (its answers are then sampled with
            this round's validation)."""
            slowest = max(state.slowest_round_seconds, clock() - started)
            return following <= spec.rounds and may_start_round(following, clock(), spec.deadline, slowest)

        try:
            record, scored, ahead, point = play_round(
                setup, round_number, spec.rounds, state, ahead, next_round_starts,
                replay=spec.resume is not None and round_number == first_round,
            )
        except ROUND_CUT_SHORT as cause:
            return end_round_cut_short(end, state, cause)
        state.slowest_round_seconds = max(state.slowest_round_seconds, clock() - round_started)
        state.rounds_done = round_number
        last_seconds = record.seconds
        write_rollouts(spec, end.storage, round_number, scored)
        if not spec.trial:  # a trial's one round is never resumed
            written = write_checkpoint(setup, state, round_number, end.storage, point=point)
            record = replace(record, checkpoint_sha256=written.sha256, checkpoint_seconds=written.seconds)
        emit(record)
        log.info(record.log_line())
    return finish(end, state, last_seconds)


def _prepare(spec: RunSpec, emit: Emit, grader: Grader, clock: Clock,
             backend_factory: BackendFactory) -> tuple[RoundSetup, Ending]:
    """The rows fit, the reward scores a reference, the model is loaded: → what every round uses, and what every
    ending needs."""
    started = clock()
    tokenizer = load_tokenizer(spec)
    train_prompts = [prompt_ids(tokenizer, row.prompt) for row in spec.train_rows]
    validation_prompts = [prompt_ids(tokenizer, row.prompt) for row in spec.validation_rows]
    _check_rows_fit("Training", train_prompts, spec)
    _check_rows_fit("Validation", validation_prompts, spec)
    try:
        try_reward_on_reference(spec.reward, grader, spec.train_rows[0].reference)
    except Exception as problem:
        raise RunFailed(str(problem)) from problem

    formatting = format_check(spec, tokenizer) if spec.trial else {}
    try:
        policy = load_policy(spec, tokenizer, trains="linear")  # a Head run's adapter gains the linear layers
    except (StartAdapterMismatch, PolicyUnloadable) as problem:
        raise RunFailed(str(problem)) from None
    backend = backend_factory(spec, policy)
    storage = open_storage(spec.storage)
    trained = [p for p in policy.model.parameters() if p.requires_grad]
    # fused: one kernel for every parameter's step, as TRL's default optimizer (adamw_torch_fused) steps
    fused = all(p.device.type in ("cpu", "cuda") and p.dtype.is_floating_point for p in trained)
    optimizer = torch.optim.AdamW(trained, lr=spec.learning_rate, weight_decay=0.0, fused=fused)
    schedule = PromptSchedule(len(spec.train_rows), spec.prompts_per_round, spec.seed)
    validation = validation_sample(len(spec.validation_rows), spec.validation_sample_size, spec.seed)
    preparation_seconds = clock() - started
    emit(Prepared(len(spec.train_rows), len(validation), round(preparation_seconds, 3)))

    def should_stop() -> bool:
        return must_stop_running_round(clock(), spec.deadline)

    setup = RoundSetup(spec, policy, backend, optimizer, grader, schedule, train_prompts, validation_prompts,
                       validation, should_stop, clock)
    return setup, Ending(spec, emit, storage, policy, formatting, preparation_seconds)


def _round_zero(setup: RoundSetup, end: Ending, state: RunState) -> tuple[float, NextRound | None]:
    """The starting adapter on the validation sample, with round 1's answers (round 1 always starts). → its
    seconds, and round 1's answers.

    Any failure here fails the run, a metric that fails too often included: nothing is kept before round 0 is
    scored, so there is no adapter to stop with.
    """
    spec, policy = setup.spec, setup.policy
    try:
        validated, ahead, validation_seconds = validate_and_sample_next(setup)
    except (RoundInterrupted, SamplingInterrupted):
        raise RunFailed(messages.TIME_LIMIT_BEFORE_ROUND_0) from None
    too_many = too_many_metric_failures(spec, setup.grader, validated, 0)
    if too_many is not None:
        raise RunFailed(too_many)
    validation_reward = float(validated.rewards.mean())
    state.keep_starting_adapter(validation_reward, policy)
    end.emit(
        RoundScored(
            round=0, rounds=spec.rounds, reward=None, signal=None, cut_off=None, metric_failures=0, graded_answers=0,
            failure_kinds=[], updated=False, loss=None, validation_reward=validation_reward, best_round=0,
            seconds=PhaseSeconds(validation=round(validation_seconds, 3)), mean_answer_tokens=None,
            token_entropy=None, peak_memory_bytes=peak_memory_bytes(policy.device),
        )
    )
    return validation_seconds, ahead


def _check_rows_fit(kind: str, prompts: list[list[int]], spec: RunSpec) -> None:
    for number, prompt in enumerate(prompts, start=1):
        if len(prompt) + spec.max_answer_tokens > spec.training_window:
            raise RunFailed(
                messages.row_does_not_fit(kind, number, len(prompt), spec.max_answer_tokens, spec.training_window)
            )
