"""The words of how a run goes and ends: the round log line, stop lines and notes, the no-signal failure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

StopReason = Literal["time_limit", "metric_failures", "out_of_memory"]
STOP_REASONS: dict[str, str] = {
    "time_limit": "time limit",
    "metric_failures": "metric failures",
    "out_of_memory": "out of memory",
}
KEPT_STARTING_ADAPTER = (
    "No round beat the starting point on validation, so the run kept its starting adapter."
)
# 000's Training trial report, for a trial that ended without finishing. The trainer says it too when it reports
# (trainer/messages.py keeps its own copy: the trainer may not import domain/runs); the run page says it for a
# trial that ended before the trainer could report (its data would not load, its worker died, it was cancelled).
TRIAL_DID_NOT_FINISH = "The trial did not finish. Fix its error and run it again before full training."


def round_log_line(result: dict[str, Any], total_rounds: int, best_round: int) -> str:
    """PRODUCT.md's line, e.g. "Round 3 of 20: reward 0.4100, signal 62%, cut off 2%, 0 metric failures,
    updated, loss 0.0120, validation reward 0.4700 (best round 3); seconds: sampling 81.2, grading 2.1,
    update 64.0, validation 9.5." Round 0 scores the starting adapter, so its line has validation only."""
    number = result["round_number"]
    validation = f"validation reward {result['validation_reward']:.4f} (best round {best_round})"
    if number == 0:
        return (
            f"Round 0 of {total_rounds}: {validation}; seconds: validation "
            f"{result['validation_seconds']:.1f}."
        )
    failures = result["metric_failures"]
    parts = [
        f"reward {result['reward']:.4f}",
        f"signal {_percent(result['signal'])}",
        f"cut off {_percent(result['cut_off'])}",
        f"{failures} metric failure{'' if failures == 1 else 's'}",
        "updated" if result["updated"] else "not updated",
    ]
    if result.get("loss") is not None:
        parts.append(f"loss {result['loss']:.4f}")
    parts.append(validation)
    seconds = (
        f"sampling {result['sampling_seconds']:.1f}, grading {result['grading_seconds']:.1f}, "
        f"update {result['update_seconds']:.1f}, validation {result['validation_seconds']:.1f}"
    )
    return f"Round {number} of {total_rounds}: {', '.join(parts)}; seconds: {seconds}."


def _percent(share: float | None) -> str:
    return f"{round((share or 0.0) * 100)}%"


def stopped_line(reason: str, after_round: int, total_rounds: int, best_round: int) -> str:
    """The line under the chart: "Stopped after round 0 of 20: metric failures · best round 0"."""
    reason_words = STOP_REASONS[reason]
    return f"Stopped after round {after_round} of {total_rounds}: {reason_words} · best round {best_round}"


def stopped_log_line(reason: str, after_round: int, total_rounds: int, best_round: int) -> str:
    """The Training logs' line: "RL stopped (metric_failures) after round N of M; best round B."."""
    return f"RL stopped ({reason}) after round {after_round} of {total_rounds}; best round {best_round}."


def completed_line(total_rounds: int, best_round: int) -> str:
    return f"Finished all {total_rounds} rounds · best round {best_round}"


# SFT and DPO log optimizer steps, not rounds, and keep the adapter of their last step.
def stopped_steps_line(reason: str, after_step: int) -> str:
    """ "Stopped after step 12: time limit · adapter of step 12"."""
    return f"Stopped after step {after_step}: {STOP_REASONS[reason]} · adapter of step {after_step}"


def stopped_steps_log_line(objective_name: str, reason: str, after_step: int) -> str:
    """ "SFT stopped (time_limit) after step 12; kept the adapter of step 12."."""
    return f"{objective_name} stopped ({reason}) after step {after_step}; kept the adapter of step {after_step}."


def completed_steps_line(steps: int) -> str:
    return f"Finished all {steps} steps"


def step_sentence(step: dict[str, Any]) -> str:
    """The timeline's line of an SFT or DPO step: "Step 8 of 24: loss 1.2345, validation loss 1.3000."."""
    validation = step.get("validation_loss")
    tail = f", validation loss {validation:.4f}" if validation is not None else ""
    return f"Step {step['step']} of {step['steps']}: loss {step['loss']:.4f}{tail}."


def no_learning_signal(first_round: int, last_round: int, values: Sequence[float]) -> str:
    span = f"{first_round}-{last_round}" if last_round != first_round else f"{first_round}"
    distinct = sorted(set(values))
    value = " or ".join(f"{v:g}" for v in distinct) if distinct else "0"
    return (
        f"RL found no learning signal in rounds {span}: every answer to every prompt scored the same "
        f"({value}). Start from an SFT adapter, give partial credit in the reward, or check the reward."
    )


def metric_failures_note(
    metric: str, version: int | str, failed: int, graded: int, round_number: int, kinds: Sequence[str]
) -> str:
    """ "Custom metric name (vV) failed on N of M answers in round R: kinds. Make it handle any text."."""
    return (
        f"Custom metric {metric} (v{version}) failed on {failed} of {graded} answers in round {round_number}"
        ": "
        f"{', '.join(kinds)}. Make it handle any text."
    )


def sampling_memory_note(answers_per_prompt: int, max_answer_tokens: int) -> str:
    return (
        f"Sampling {answers_per_prompt} answers of up to {max_answer_tokens} tokens does not fit in this "
        "GPU's "
        "memory. Choose a GPU with more memory, fewer answers per prompt or a shorter longest sampled answer."
    )


def training_memory_note(micro_batch_size: int, max_answer_tokens: int) -> str:
    smaller_batch = "" if micro_batch_size == 1 else ", a smaller micro batch size"
    return (
        f"Training on a micro batch of {micro_batch_size} answers of up to {max_answer_tokens} tokens "
        "does not "
        f"fit in this GPU's memory. Choose a GPU with more memory{smaller_batch} or a shorter longest "
        "sampled answer."
    )
