"""How an RL run ends, what it keeps and what it says (the product documents' words are domain/runs/messages.py):

- every round done: the best round's adapter is saved; a run that never had a learning signal fails instead;
- the time limit: the run stops and keeps its best adapter (a round still running is lost);
- a metric failing on too many answers, or out of memory: a full run stops and keeps its best adapter;
- a trial fails on any of these, with a report of what it measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.rewards.custom import FAILURE_SHARE_THAT_STOPS
from domain.rewards.types import Grader
from domain.runs import messages
from trainer.checkpoint_files import discard_checkpoints
from trainer.failures import RoundInterrupted, RunFailed, TooManyMetricFailures
from trainer.grpo_update import UpdateOutOfMemory
from trainer.model_loading import Policy, memory_total_bytes, peak_memory_bytes
from trainer.progress import Completed, Emit, Failed, PhaseSeconds, Stopped, StopReason
from trainer.reward import custom_metric_title, is_custom
from trainer.rollouts import write_rollouts
from trainer.run_state import RunState, save_best_adapter
from trainer.sampling import SamplingInterrupted, SamplingOutOfMemory
from trainer.scoring import ScoredRound
from trainer.spec import RunSpec
from trainer.storage import RunStorage
from trainer.trial import trial_report

# What cuts a round short and ends the run (end_round_cut_short); any other error fails it.
ROUND_CUT_SHORT = (RoundInterrupted, SamplingInterrupted, SamplingOutOfMemory, UpdateOutOfMemory, TooManyMetricFailures)


@dataclass
class Ending:
    """What an ending needs to save and report."""

    spec: RunSpec
    emit: Emit
    storage: RunStorage
    policy: Policy
    formatting: dict
    preparation_seconds: float = 0.0


def too_many_metric_failures(spec: RunSpec, grader: Grader, scored: ScoredRound, round_number: int) -> str | None:
    """The run's note when more than a tenth of the graded answers failed the metric (000), else None."""
    if scored.failed <= FAILURE_SHARE_THAT_STOPS * scored.graded:
        return None
    metric = custom_metric_title(spec.reward) if is_custom(spec.reward) else grader.label
    return messages.metric_failures_note(metric, scored.failed, scored.graded, round_number, scored.failure_kinds)


def finish(end: Ending, state: RunState, last_seconds: PhaseSeconds) -> bool:
    """Every round done: save the best round's adapter (a trial then reports), or fail if no round had a signal."""
    if state.rounds_with_signal == 0:
        raise RunFailed(_no_signal_message(state))
    end.emit(save_best_adapter(end.spec, end.storage, end.policy, state))
    if not end.spec.trial:  # once the adapter is saved whole: a lost worker from here on keeps it, never resumes
        discard_checkpoints(end.storage, end.spec.run_id, state.rounds_done)
    if end.spec.trial:
        device = end.policy.device
        end.emit(trial_report(end.spec, last_seconds, end.preparation_seconds, peak_memory_bytes(device),
                              memory_total_bytes(device), end.formatting, finished=True))
    end.emit(_completed(state))
    return True


def end_round_cut_short(end: Ending, state: RunState, cause: Exception) -> bool:
    """The round under way cannot finish (one of ROUND_CUT_SHORT): end the run as its cause says."""
    if isinstance(cause, RoundInterrupted | SamplingInterrupted):
        return stop(end, state, "time_limit", None, None)
    if isinstance(cause, SamplingOutOfMemory):
        note = messages.sampling_memory_note(end.spec.answers_per_prompt, end.spec.max_answer_tokens)
        return _end_on_round_failure(end, state, "out_of_memory", note, None)
    if isinstance(cause, UpdateOutOfMemory):
        note = messages.training_memory_note(end.spec.micro_batch_size, end.spec.max_answer_tokens)
        return _end_on_round_failure(end, state, "out_of_memory", note, None)
    if isinstance(cause, TooManyMetricFailures):
        return _end_on_round_failure(end, state, "metric_failures", cause.note, cause.scored)
    raise cause


def _end_on_round_failure(end: Ending, state: RunState, reason: StopReason, note: str,
                          scored: ScoredRound | None) -> bool:
    """Metric failures or out of memory: a full run stops and keeps its best adapter; a trial fails."""
    if end.spec.trial:
        end.emit(Failed(message=note))
        advice = [messages.TRIAL_OUT_OF_MEMORY] if reason == "out_of_memory" else []
        _emit_unfinished_trial(end, advice)
        return False
    return stop(end, state, reason, note, scored)


def stop(end: Ending, state: RunState, reason: StopReason, note: str | None, scored: ScoredRound | None) -> bool:
    """An early end: say so, save the adapter first, then the last round's rollouts."""
    if end.spec.trial:  # a trial that reaches its limit did not finish
        end.emit(Failed(message=messages.TRIAL_DID_NOT_FINISH))
        _emit_unfinished_trial(end, [])
        return False
    if reason == "time_limit" and state.rounds_done > 0 and state.rounds_with_signal == 0:
        raise RunFailed(_no_signal_message(state))
    end.emit(
        Stopped(
            reason=reason, after_round=state.rounds_done, rounds=end.spec.rounds, best_round=state.best_round,
            note=note, log_line=messages.stopped_log_line(reason, state.rounds_done, end.spec.rounds, state.best_round),
        )
    )
    end.emit(save_best_adapter(end.spec, end.storage, end.policy, state))
    if scored is not None:
        write_rollouts(end.spec, end.storage, state.rounds_done + 1, scored)
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
