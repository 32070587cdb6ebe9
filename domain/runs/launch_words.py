"""The words a launch uses: the confirmation Launch asks before it starts a GPU, and Prompts per round as a trial
will use them."""

from __future__ import annotations

from domain.runs import objectives
from domain.runs.run_settings import TRIAL_MAX_PROMPTS, RunSettings


def trial_confirmation(settings: RunSettings) -> str:
    """The sentence the launch confirmation of a trial shows; SFT, DPO and Head train an epoch, not a round."""
    if not objectives.is_rl(settings.objective):
        return (
            f"A trial: one epoch on up to {TRIAL_MAX_PROMPTS} training examples and "
            f"{settings.trial_minutes_allowed()} minutes, then the GPU is released."
        )
    return (
        f"A trial: one round on up to {TRIAL_MAX_PROMPTS} prompts and {settings.trial_minutes_allowed()} "
        "minutes, "
        "then the GPU is released."
    )


def launch_confirmation(settings: RunSettings) -> str:
    """What Launch asks before it starts a GPU, in the objective's own words: rounds for RL, epochs and steps
    for SFT, DPO and Head.

    >>> launch_confirmation(RunSettings(rounds=3))
    'A full run: 3 rounds, stopped by its time limit of 2 hours at the latest.'
    >>> launch_confirmation(RunSettings(objective="sft"))
    'A full SFT run: 3 epochs in steps of 8 examples, stopped by its time limit of 2 hours at the latest.'
    """
    if settings.is_trial:
        return trial_confirmation(settings)
    limit = f"stopped by its time limit of {settings.time_limit_hours:g} hours at the latest."
    if objectives.is_rl(settings.objective):
        return f"A full run: {settings.rounds} rounds, {limit}"
    name = objectives.OBJECTIVE_NAMES.get(settings.objective, settings.objective.upper())
    epochs = f"{settings.epochs} epoch{'' if settings.epochs == 1 else 's'}"
    return f"A full {name} run: {epochs} in steps of {settings.batch_size} examples, {limit}"


def prompts_per_round_words(settings: RunSettings) -> str:
    """Prompts per round as the run will use them: a trial trains on at most 8 (000).

    >>> trial = RunSettings(kind="trial", prompts_per_round=16)
    >>> prompts_per_round_words(trial), prompts_per_round_words(RunSettings())
    ('8 (a trial uses at most 8)', '64')
    """
    if settings.is_trial and settings.prompts_per_round > TRIAL_MAX_PROMPTS:
        return f"{TRIAL_MAX_PROMPTS} (a trial uses at most {TRIAL_MAX_PROMPTS})"
    return str(settings.effective_prompts_per_round)
