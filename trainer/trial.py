"""A trial's checks and report: the format of every sampled prompt, the phase seconds and the full run's estimate.

The estimate, as 000 says: the seconds one round took, scaled from the trial's prompts to the full run's Prompts per
round, times its Rounds, plus the preparation time and the validation scoring, which happens before the first round
and after each (scaled from the trial's validation prompts to the full run's sample of up to 128).
"""

from __future__ import annotations

from trainer import messages
from trainer.progress import PhaseSeconds, TrialReport
from trainer.spec import RunSpec

TRIAL_PROMPTS = 8  # at most 8 training and 8 validation prompts
FULL_VALIDATION_SAMPLE = 128


def check_prompt_format(number: int, prompt: list[dict], tokenizer) -> str | None:
    """Why training row `number`'s prompt is malformed, or None. Names the row, never its text."""
    roles = [m.get("role") for m in prompt] if isinstance(prompt, list) else []
    if not roles:
        return f"Training row {number} has no prompt messages."
    if any(not isinstance(m.get("content"), str) for m in prompt):
        return f"Training row {number} has a message whose content is not text."
    if any(role not in ("system", "user", "assistant") for role in roles):
        return f"Training row {number} has a message whose role is not system, user or assistant."
    if "system" in roles[1:]:
        return f"Training row {number} has a system message after the first message."
    if roles[-1] != "user":
        return f"Training row {number}'s prompt does not end with a user turn."
    try:
        tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    except Exception as error:  # the model's own template refused it
        return f"Training row {number} does not fit the model's chat template: {type(error).__name__}."
    return None


def full_run_estimate(spec: RunSpec, seconds: PhaseSeconds, preparation_seconds: float) -> float:
    """Seconds a full run would take.

    A trial round of 8 prompts: sampling 8, grading 1, update 3, validation 2 (8 prompts); preparation 30 s. A full
    run of 64 prompts × 20 rounds with 128 validation prompts:
    (8+1+3) × 64/8 × 20 + 2 × 128/8 × 21 + 30 = 1920 + 672 + 30 = 2622.
    >>> from trainer.spec import ModelRef, RewardSpec, Row, Storage
    >>> row = Row([{"role": "user", "content": "q"}], "a")
    >>> spec = RunSpec("r", ModelRef("m"), RewardSpec({}), [row] * 8, [row] * 200, Storage("s"), 0.0)
    >>> full_run_estimate(spec, PhaseSeconds(8, 1, 3, 2), 30)
    2622.0
    """
    trial_prompts = min(spec.prompts_per_round, TRIAL_PROMPTS, len(spec.train_rows))
    trial_validation = min(TRIAL_PROMPTS, len(spec.validation_rows))
    full_validation = min(FULL_VALIDATION_SAMPLE, len(spec.validation_rows))
    round_seconds = (seconds.sampling + seconds.grading + seconds.update) * spec.prompts_per_round / trial_prompts
    validation_seconds = seconds.validation * full_validation / trial_validation
    return float(round_seconds * spec.rounds + validation_seconds * (spec.rounds + 1) + preparation_seconds)


def trial_report(
    spec: RunSpec,
    seconds: PhaseSeconds | None,
    preparation_seconds: float,
    peak_memory: int,
    memory_total: int | None,
    formatting: dict,
    finished: bool,
    extra_advice: list[str] | None = None,
) -> TrialReport:
    advice = list(extra_advice or [])
    estimate = cost = None
    if finished and seconds is not None:
        estimate = full_run_estimate(spec, seconds, preparation_seconds)
        if spec.price_per_hour is not None:
            cost = round(estimate / 3600 * spec.price_per_hour, 2)
        advice.append(messages.TRIAL_ESTIMATE_HOLDS)
        if memory_total and peak_memory > 0.9 * memory_total:
            advice.append(messages.TRIAL_MEMORY_OVER_90)
        if spec.full_time_limit_hours is not None and estimate > spec.full_time_limit_hours * 3600:
            advice.append(messages.TRIAL_OVER_TIME_LIMIT)
    else:
        advice.append(messages.TRIAL_DID_NOT_FINISH)
    return TrialReport(
        finished=finished,
        formatting=formatting,
        seconds_per_round=round(seconds.total, 3) if seconds else None,
        peak_memory_bytes=peak_memory,
        memory_total_bytes=memory_total,
        seconds=seconds or PhaseSeconds(),
        preparation_seconds=round(preparation_seconds, 3),
        full_training_seconds=round(estimate, 1) if estimate is not None else None,
        full_training_rounds=spec.rounds,
        full_gpu_cost=cost,
        advice=advice,
    )
