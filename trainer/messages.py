"""The product documents' own words for how a run ends, with their placeholders filled.

None of them names a prompt, an answer or a reference.
"""

from __future__ import annotations

from collections.abc import Iterable


def no_learning_signal(first_round: int, last_round: int, value: str) -> str:
    return (
        f"RL found no learning signal in rounds {first_round}-{last_round}: every answer to every prompt scored "
        f"the same ({value}). Start from an SFT adapter, give partial credit in the reward, or check the reward."
    )


def metric_failures(metric: str, failed: int, graded: int, round_number: int, kinds: Iterable[str]) -> str:
    return (
        f"Custom metric {metric} failed on {failed} of {graded} answers in round {round_number}: {', '.join(kinds)}. "
        "Make it handle any text."
    )


def sampling_out_of_memory(answers: int, tokens: int) -> str:
    return (
        f"Sampling {answers} answers of up to {tokens} tokens does not fit in this GPU's memory. Choose a GPU "
        "with more memory, fewer answers per prompt or a shorter longest sampled answer."
    )


def update_out_of_memory(micro_batch: int, tokens: int) -> str:
    choices = (
        "a smaller micro batch size or a shorter longest sampled answer"
        if micro_batch > 1
        else "or a shorter longest sampled answer"
    )
    more_memory = "Choose a GPU with more memory, " if micro_batch > 1 else "Choose a GPU with more memory "
    return (
        f"Training on a micro batch of {micro_batch} answers of up to {tokens} tokens does not fit in this GPU's "
        f"memory. {more_memory}{choices}."
    )


def stopped_log_line(reason: str, after_round: int, rounds: int, best_round: int) -> str:
    return f"RL stopped ({reason}) after round {after_round} of {rounds}; best round {best_round}."


KEPT_STARTING_ADAPTER = "No round beat the starting point on validation, so the run kept its starting adapter."

TIME_LIMIT_BEFORE_ROUND_0 = (
    "The time limit came before round 0 was done (the starting adapter's score on the validation sample), "
    "so no adapter was kept. Raise the Time limit (hours) and run it again."
)


def row_does_not_fit(kind: str, number: int, prompt_tokens: int, answer_tokens: int, window: int) -> str:
    return (
        f"{kind} row {number} doesn't fit in the Training window ({window:,} tokens): its prompt has "
        f"{prompt_tokens:,} tokens and the longest sampled answer {answer_tokens:,}. Raise the Training window "
        "or lower Longest sampled answer (tokens)."
    )


# A trial's advice under its tiles (000, "Try an RL trial first").
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
