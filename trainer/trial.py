"""A trial's checks and report: the format of every sampled prompt, the phase seconds and the full run's estimate.

The estimate, as 000 says: the seconds one round took, scaled from the trial's prompts to the full run's Prompts per
round, times its Rounds, plus the preparation time and the validation scoring, which happens before the first round
and after each (scaled from the trial's validation prompts to the full run's sample). The trial's own round (one,
of at most 8 prompts and 8 validation prompts) and the full run it prepares (`spec.full_run`) come in the spec.
"""

from __future__ import annotations

from domain.runs import messages
from trainer.progress import PhaseSeconds, TrialReport
from trainer.schedule import PromptSchedule
from trainer.spec import FullRun, RunSpec


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


def format_check(spec: RunSpec, tokenizer) -> dict:
    """The report's formatting tile: the prompts the trial's round samples, and what is wrong with any of them."""
    sampled = PromptSchedule(len(spec.train_rows), spec.prompts_per_round, spec.seed).next_round()
    problems = [
        problem
        for i in sampled
        if (problem := check_prompt_format(i + 1, spec.train_rows[i].prompt, tokenizer)) is not None
    ]
    return {"prompts_checked": len(sampled), "problems": problems}


def full_run_estimate(spec: RunSpec, full: FullRun, seconds: PhaseSeconds, preparation_seconds: float) -> float:
    """Seconds the full run would take.

    A trial round of 8 prompts: sampling 8, grading 1, update 3, validation 2 (8 prompts); preparation 30 s. A full
    run of 64 prompts × 20 rounds with 128 validation prompts:
    (8+1+3) × 64/8 × 20 + 2 × 128/8 × 21 + 30 = 1920 + 672 + 30 = 2622.
    >>> from trainer.spec import ModelRef, RewardSpec, Row, Storage
    >>> row = Row([{"role": "user", "content": "q"}], "a")
    >>> full = FullRun(rounds=20, prompts_per_round=64, validation_sample_size=128, time_limit_hours=2.0,
    ...                price_per_hour=None)
    >>> spec = RunSpec("r", ModelRef("m"), RewardSpec({}), [row] * 8, [row] * 200, Storage("s"), 0.0, rounds=1,
    ...                prompts_per_round=8, validation_sample_size=8, answers_per_prompt=8, max_answer_tokens=512,
    ...                learning_rate=5e-6, training_window=2048, micro_batch_size=8, lora_rank=16, lora_alpha=32,
    ...                loss_type="grpo", generation_backend=None, vllm_gpu_memory=0.5, quantization="none", seed=0,
    ...                full_run=full)
    >>> full_run_estimate(spec, full, PhaseSeconds(8, 1, 3, 2), 30)
    2622.0
    """
    trial_prompts = min(spec.prompts_per_round, len(spec.train_rows))
    trial_validation = min(spec.validation_sample_size, len(spec.validation_rows))
    full_validation = min(full.validation_sample_size, len(spec.validation_rows))
    round_seconds = (seconds.sampling + seconds.grading + seconds.update) * full.prompts_per_round / trial_prompts
    validation_seconds = seconds.validation * full_validation / trial_validation
    return float(round_seconds * full.rounds + validation_seconds * (full.rounds + 1) + preparation_seconds)


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
    full = spec.full_run
    assert full is not None, "only a trial reports"
    advice = list(extra_advice or [])
    estimate = cost = None
    if finished and seconds is not None:
        estimate = full_run_estimate(spec, full, seconds, preparation_seconds)
        if full.price_per_hour is not None:
            cost = round(estimate / 3600 * full.price_per_hour, 2)
        advice.append(messages.TRIAL_ESTIMATE_HOLDS)
        if memory_total and peak_memory > 0.9 * memory_total:
            advice.append(messages.TRIAL_MEMORY_OVER_90)
        if estimate > full.time_limit_hours * 3600:
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
        full_training_rounds=full.rounds,
        full_gpu_cost=cost,
        advice=advice,
    )
