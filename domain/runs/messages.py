"""The words of how a run goes and ends, in one place for the trainer that says them and the pages that show them:
the round log line, stop lines and notes, the no-signal failure, a trial's advice.

Plain Python, like the time-limit rule: the trainer may import it (README, "Layout"). None of these words names a
prompt, an answer or a reference."""

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
TIME_LIMIT_BEFORE_ROUND_0 = (
    "The time limit came before round 0 was done (the starting adapter's score on the validation sample), "
    "so no adapter was kept. Raise the Time limit (hours) and run it again."
)

# 000's Training trial report: the advice under its tiles ("Try an RL trial first"). TRIAL_DID_NOT_FINISH is also
# what the run page says for a trial that ended before the trainer could report (its data would not load, its
# worker died, it was cancelled).
TRIAL_ESTIMATE_HOLDS = (
    "The estimate holds for the same GPU, model revision, answers per prompt, longest sampled answer, context "
    "length and adapter settings. A small sample can miss long rows that run out of memory."
)
TRIAL_OUT_OF_MEMORY = (
    "The GPU ran out of memory. Choose a larger GPU, fewer answers per prompt or a shorter longest sampled answer."
)
TRIAL_MEMORY_OVER_90 = (
    "The trial used over 90% of this GPU's memory. Choose a larger GPU, fewer answers per prompt or a shorter "
    "longest sampled answer."
)
TRIAL_OVER_TIME_LIMIT = "Full training would take longer than its time limit. The full run's form raises the limit."
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
    updated = updated_words(result.get("passes"), result.get("clipped")) if result["updated"] else "not updated"
    loss = result.get("loss")
    # one f-string: every round read writes its line (projections/run_reads.py), a thousand for a long run's page
    return (
        f"Round {number} of {total_rounds}: reward {result['reward']:.4f}, signal {_percent(result['signal'])}, "
        f"cut off {_percent(result['cut_off'])}, {failures} metric failure{'' if failures == 1 else 's'}, "
        f"{updated}{'' if loss is None else f', loss {loss:.4f}'}, {validation}; seconds: "
        f"sampling {result['sampling_seconds']:.1f}, grading {result['grading_seconds']:.1f}, "
        f"update {result['update_seconds']:.1f}, validation {result['validation_seconds']:.1f}."
    )


def updated_words(passes: int | None, clipped: float | None) -> str:
    """How a round updated: "updated", or with Epochs above 1 its passes and the share of tokens the clip held back.

    >>> updated_words(None, None), updated_words(1, None), updated_words(2, 0.034)
    ('updated', 'updated', 'updated in 2 passes (clipped 3%)')
    """
    if not passes or passes == 1:
        return "updated"
    return f"updated in {passes} passes (clipped {_percent(clipped)})"


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


def no_learning_signal(first_round: int, last_round: int, value: str) -> str:
    """The failure of a run that trained on nothing; `value` is the score every answer got, in words."""
    span = f"{first_round}-{last_round}" if last_round != first_round else f"{first_round}"
    return (
        f"RL found no learning signal in rounds {span}: every answer to every prompt scored the same "
        f"({value}). Start from an SFT adapter, give partial credit in the reward, or check the reward."
    )


def scores_in_words(values: Sequence[float]) -> str:
    """ "0", "1" or "0 or 1": the distinct scores of rounds that had no signal."""
    distinct = sorted(set(values))
    return " or ".join(f"{v:g}" for v in distinct) if distinct else "0"


def metric_failures_note(metric: str, failed: int, graded: int, round_number: int, kinds: Sequence[str]) -> str:
    """ "Custom metric name (vV) failed on N of M answers in round R: kinds. Make it handle any text."; `metric` is
    the metric's title, 'name (vV)' for a custom metric."""
    return (
        f"Custom metric {metric} failed on {failed} of {graded} answers in round {round_number}: "
        f"{', '.join(kinds)}. Make it handle any text."
    )


def sampling_memory_note(answers_per_prompt: int, max_answer_tokens: int) -> str:
    return (
        f"Sampling {answers_per_prompt} answers of up to {max_answer_tokens} tokens does not fit in this GPU's "
        "memory. Choose a GPU with more memory, fewer answers per prompt or a shorter longest sampled answer."
    )


def training_memory_note(micro_batch_size: int, max_answer_tokens: int) -> str:
    smaller_batch = "" if micro_batch_size == 1 else ", a smaller micro batch size"
    return (
        f"Training on a micro batch of {micro_batch_size} answers of up to {max_answer_tokens} tokens does not "
        f"fit in this GPU's memory. Choose a GPU with more memory{smaller_batch} or a shorter longest sampled "
        "answer."
    )


def row_does_not_fit(kind: str, number: int, prompt_tokens: int, answer_tokens: int, window: int) -> str:
    return (
        f"{kind} row {number} doesn't fit in the Training window ({window:,} tokens): its prompt has "
        f"{prompt_tokens:,} tokens and the longest sampled answer {answer_tokens:,}. Raise the Training window "
        "or lower Longest sampled answer (tokens)."
    )
