"""A run's alarms (issue 21): the rules that look at the last rounds as they arrive and say, in the console's words,
what was seen (with its numbers) and what to do. Pure: the Run keeps a small `watch` of its rounds
(domain/runs/alarm_watch.py; domain/runs/run_alarms.py records the events); the quiet run's rule takes the times
the reconciler reads.

    >>> watch = new_watch()
    >>> for n, (reward, validation) in enumerate([(0.30, 0.50), (0.32, 0.50), (0.40, 0.49), (0.50, 0.48),
    ...                                           (0.60, 0.48)], start=1):
    ...     watch = watched(watch, {"round_number": n, "reward": reward, "validation_reward": validation,
    ...                             "signal": 0.5, "sampling_seconds": 10.0})
    >>> [alarm.kind for alarm in round_alarms(watch, max_answer_tokens=512, format_bonus=False)]
    ['reward_without_validation']
    >>> print(round_alarms(watch, 512, False)[0].seen)  # doctest: +NORMALIZE_WHITESPACE
    Reward rose from 0.31 to 0.55 over rounds 1-5 (first two rounds against last two) while validation reward went
    from 0.50 to 0.48.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import mean
from typing import Any

from domain.rewards.metrics.verifiable import CORRECT_WEIGHT, FORMAT_WEIGHT
from domain.runs.alarm_watch import ALARM_WINDOW, new_watch, watched

__all__ = ["ALARM_WINDOW", "Alarm", "new_watch", "round_alarms", "watched"]  # the watch's, read with the rules

TREND_ROUNDS = 3  # the fewest rounds a trend is read over (answers growing, format rising)
# Reward rising while validation does not: the reward gained at least 0.10 over the window (mean of the first two
# rounds against the last two) while validation reward gained no more than 0.01 (flat or falling).
REWARD_RISE = 0.10
VALIDATION_FLAT = 0.01
# Answers growing towards Longest sampled answer: the latest round's mean answer is at least 80% of it and grew
# over the window; or the cut-off share is at least 20% and climbed 10 points over the window.
LONG_ANSWER_SHARE = 0.8
CUT_OFF_SHARE = 0.2
CUT_OFF_CLIMB = 0.1
# Format rising while correct does not (a built-in task with Format bonus): the format part (the share of answers
# in the <think>...</think><answer>...</answer> shape) gained 30 points while the correct part gained under 2.
FORMAT_RISE = 0.3
CORRECT_FLAT = 0.02
# Entropy collapsing: the latest round's token entropy is under a quarter of the run's highest, after two trained
# rounds at least; answers then come out alike, and alike answers teach nothing.
ENTROPY_COLLAPSE_SHARE = 0.25
# No signal: three trained rounds in a row where every answer to each prompt scored alike.
NO_SIGNAL_ROUNDS = 3
# Quiet: no round and no heartbeat for longer than the run's slowest round x 3 (a round may be slow for a while;
# three times its slowest is not a slow round).
QUIET_MARGIN = 3.0

REWARD_WITHOUT_VALIDATION = "reward_without_validation"
ANSWERS_GROWING = "answers_growing"
FORMAT_WITHOUT_CORRECT = "format_without_correct"
ENTROPY_COLLAPSE = "entropy_collapse"
NO_SIGNAL = "no_signal"
QUIET = "quiet"

TITLES = {
    REWARD_WITHOUT_VALIDATION: "Reward rises, validation does not",
    ANSWERS_GROWING: "Answers grow towards the limit",
    FORMAT_WITHOUT_CORRECT: "Format rises, correct answers do not",
    ENTROPY_COLLAPSE: "The policy's entropy is collapsing",
    NO_SIGNAL: "No learning signal",
    QUIET: "The run went quiet",
}

ADVICE = {
    REWARD_WITHOUT_VALIDATION: (
        "The model may be learning what the reward pays rather than the task. Read the latest rounds' Samples for "
        "answers that score without being right; if they game the reward, fix the reward and start again. The "
        "adapter kept is the best round on validation, not the latest."
    ),
    ANSWERS_GROWING: (
        "A cut-off answer scores 0. If the reward pays for length, change it; otherwise raise Longest sampled "
        "answer (tokens) or ask for shorter answers in the prompt."
    ),
    FORMAT_WITHOUT_CORRECT: (
        "The model is learning the answer's shape, not the answers. Give it a few rounds; if the correct part stays "
        "flat, read the Samples and check the references, or lower the Learning rate."
    ),
    ENTROPY_COLLAPSE: (
        "Its answers are becoming all alike, and alike answers give no signal. Lower the Learning rate and start "
        "again from the best round's adapter (Start from)."
    ),
    NO_SIGNAL: (
        "The prompts are all too easy or all too hard for the model. Choose harder (or easier) prompts, a reward "
        "that tells answers apart, or more Answers per prompt. A run where no round has a signal fails at the end."
    ),
    QUIET: (
        "The worker may be stuck or gone: read the Training logs and the worker's log. If its heartbeat has stopped, "
        "the reconciler ends the run or resumes it from its last round; Cancel run stops it now."
    ),
}


@dataclass(frozen=True)
class Alarm:
    """An alarm that holds: its kind, and the banner's words (what was seen, with its numbers; what to do)."""

    kind: str
    seen: str

    @property
    def title(self) -> str:
        return TITLES[self.kind]

    @property
    def advice(self) -> str:
        return ADVICE[self.kind]


def round_alarms(watch: Mapping[str, Any], max_answer_tokens: int, format_bonus: bool) -> list[Alarm]:
    """Every round rule that holds after the latest round, in a fixed order."""
    rounds = watch["rounds"]
    found = [
        _reward_without_validation(rounds),
        _answers_growing(rounds, max_answer_tokens),
        _format_without_correct(rounds) if format_bonus else None,
        _entropy_collapse(rounds, watch["peak_entropy"]),
        _no_signal(rounds),
    ]
    return [alarm for alarm in found if alarm is not None]


def _ends(rounds: list[dict[str, Any]], name: str) -> tuple[float, float] | None:
    """The mean of `name` over the first two rounds and over the last two; None when a round lacks it."""
    values = [r[name] for r in rounds]
    if any(value is None for value in values):
        return None
    return mean(values[:2]), mean(values[-2:])


def _span(rounds: list[dict[str, Any]]) -> str:
    return f"rounds {rounds[0]['round']}-{rounds[-1]['round']}"


def _reward_without_validation(rounds: list[dict[str, Any]]) -> Alarm | None:
    if len(rounds) < ALARM_WINDOW:
        return None
    reward, validation = _ends(rounds, "reward"), _ends(rounds, "validation")
    if reward is None or validation is None:
        return None
    if reward[1] - reward[0] < REWARD_RISE or validation[1] - validation[0] > VALIDATION_FLAT:
        return None
    return Alarm(REWARD_WITHOUT_VALIDATION, (
        f"Reward rose from {reward[0]:.2f} to {reward[1]:.2f} over {_span(rounds)} (first two rounds against last "
        f"two) while validation reward went from {validation[0]:.2f} to {validation[1]:.2f}."
    ))


def _answers_growing(rounds: list[dict[str, Any]], max_answer_tokens: int) -> Alarm | None:
    """
    >>> rounds = [{"round": n, "tokens": t, "cut_off": c} for n, t, c in [(1, 200, 0.0), (2, 300, 0.05),
    ...                                                                  (3, 420, 0.25)]]
    >>> print(_answers_growing(rounds, 512).seen)  # doctest: +NORMALIZE_WHITESPACE
    Answers grew from 200 to 420 tokens on average over rounds 1-3, towards the Longest sampled answer of 512;
    25% were cut off in round 3 (0% in round 1).
    """
    if len(rounds) < TREND_ROUNDS:
        return None
    first, last = rounds[0], rounds[-1]
    long = (
        first["tokens"] is not None and last["tokens"] is not None
        and last["tokens"] >= LONG_ANSWER_SHARE * max_answer_tokens and last["tokens"] > first["tokens"]
    )
    cut = (
        first["cut_off"] is not None and last["cut_off"] is not None
        and last["cut_off"] >= CUT_OFF_SHARE and last["cut_off"] - first["cut_off"] >= CUT_OFF_CLIMB
    )
    if not (long or cut):
        return None
    words = []
    if first["tokens"] is not None and last["tokens"] is not None:
        words.append(
            f"Answers grew from {first['tokens']:.0f} to {last['tokens']:.0f} tokens on average over "
            f"{_span(rounds)}, towards the Longest sampled answer of {max_answer_tokens}"
        )
    if first["cut_off"] is not None and last["cut_off"] is not None:
        words.append(
            f"{last['cut_off']:.0%} were cut off in round {last['round']} ({first['cut_off']:.0%} in round "
            f"{first['round']})"
        )
    return Alarm(ANSWERS_GROWING, "; ".join(words) + ".")


def format_part(reward: float, correct: float) -> float:
    """The format part of a built-in task's reward with Format bonus: the reward is 0.9 x correct + 0.1 x format.

    >>> round(format_part(0.1, 0.0), 6), round(format_part(0.9 * 0.5 + 0.1 * 0.8, 0.5), 6)
    (1.0, 0.8)
    """
    return min(max((reward - CORRECT_WEIGHT * correct) / FORMAT_WEIGHT, 0.0), 1.0)


def _format_without_correct(rounds: list[dict[str, Any]]) -> Alarm | None:
    """
    >>> rounds = [{"round": n, "reward": 0.9 * 0.3 + 0.1 * f, "accuracy": 0.3} for n, f in
    ...           [(1, 0.1), (2, 0.2), (3, 0.6), (4, 0.9)]]
    >>> print(_format_without_correct(rounds).seen)
    The format part rose from 15% to 75% of answers over rounds 1-4 while the correct part went from 30% to 30%.
    """
    if len(rounds) < TREND_ROUNDS or any(r["reward"] is None or r["accuracy"] is None for r in rounds):
        return None
    formats = [format_part(r["reward"], r["accuracy"]) for r in rounds]
    shape = mean(formats[:2]), mean(formats[-2:])
    correct = _ends(rounds, "accuracy")
    assert correct is not None
    if shape[1] - shape[0] < FORMAT_RISE or correct[1] - correct[0] >= CORRECT_FLAT:
        return None
    return Alarm(FORMAT_WITHOUT_CORRECT, (
        f"The format part rose from {shape[0]:.0%} to {shape[1]:.0%} of answers over {_span(rounds)} while the "
        f"correct part went from {correct[0]:.0%} to {correct[1]:.0%}."
    ))


def _entropy_collapse(rounds: list[dict[str, Any]], peak: Mapping[str, Any] | None) -> Alarm | None:
    """
    >>> print(_entropy_collapse([{"round": 6, "entropy": 0.05}], {"round": 1, "value": 1.2}).seen)
    The policy's token entropy fell to 0.050 in round 6, from 1.200 at its highest (round 1).
    >>> _entropy_collapse([{"round": 6, "entropy": 0.5}], {"round": 1, "value": 1.2}) is None
    True
    """
    if not rounds or peak is None or rounds[-1]["entropy"] is None or rounds[-1]["round"] == peak["round"]:
        return None
    latest = rounds[-1]
    if latest["entropy"] >= ENTROPY_COLLAPSE_SHARE * peak["value"]:
        return None
    return Alarm(ENTROPY_COLLAPSE, (
        f"The policy's token entropy fell to {latest['entropy']:.3f} in round {latest['round']}, from "
        f"{peak['value']:.3f} at its highest (round {peak['round']})."
    ))


def _no_signal(rounds: list[dict[str, Any]]) -> Alarm | None:
    """
    >>> rounds = [{"round": n, "signal": 0.0, "reward": 1.0} for n in (4, 5, 6)]
    >>> print(_no_signal(rounds).seen)  # doctest: +NORMALIZE_WHITESPACE
    Rounds 4-6 had no signal: every answer to each prompt scored alike (mean reward 1.00: all right), so they taught
    nothing.
    """
    last = rounds[-NO_SIGNAL_ROUNDS:]
    if len(last) < NO_SIGNAL_ROUNDS or any(r["signal"] is None or r["signal"] > 0 for r in last):
        return None
    reward = last[-1]["reward"]
    verdict = ""
    if reward is not None:
        which = ": all right" if reward >= 0.99 else ": all wrong" if reward <= 0.01 else ""
        verdict = f" (mean reward {reward:.2f}{which})"
    return Alarm(NO_SIGNAL, (
        f"Rounds {last[0]['round']}-{last[-1]['round']} had no signal: every answer to each prompt scored alike"
        f"{verdict}, so they taught nothing."
    ))


def quiet_alarm(
    quiet_seconds: float, slowest_seconds: float | None, since: str, at_least: float = 0.0
) -> Alarm | None:
    """No round and no heartbeat for `quiet_seconds` (since `since`, in words): an alarm when that is longer than
    the slowest round x `QUIET_MARGIN` and than `at_least` (the caller's floor: a round of a second is no reason
    to call a run quiet between two heartbeats); never before a round has been timed.

    >>> print(quiet_alarm(400.0, 100.0, "14:02:11 UTC").seen)
    No round and no heartbeat for 6 min 40 s (since 14:02:11 UTC), over 3 x its slowest round (1 min 40 s).
    >>> quiet_alarm(250.0, 100.0, "14:02:11 UTC") is None, quiet_alarm(250.0, None, "") is None
    (True, True)
    >>> quiet_alarm(8.0, 1.0, "14:02:11 UTC", at_least=10.0) is None
    True
    """
    if not slowest_seconds or quiet_seconds <= max(QUIET_MARGIN * slowest_seconds, at_least):
        return None
    return Alarm(QUIET, (
        f"No round and no heartbeat for {duration_words(quiet_seconds)} (since {since}), over {QUIET_MARGIN:g} x its "
        f"slowest round ({duration_words(slowest_seconds)})."
    ))


def duration_words(seconds: float) -> str:
    """
    >>> duration_words(12.4), duration_words(100), duration_words(7260)
    ('12 s', '1 min 40 s', '2 h 1 min')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


def raised_sentence(title: str, number: int, seen: str, advice: str) -> str:
    """The timeline's words for a raised alarm.

    >>> raised_sentence("No learning signal", 5, "Rounds 3-5 had no signal.", "Choose harder prompts.")
    'Alarm after round 5 — No learning signal: Rounds 3-5 had no signal. Choose harder prompts.'
    """
    return f"Alarm after round {number} — {title}: {seen} {advice}"


def cleared_sentence(kind: str, number: int) -> str:
    """
    >>> cleared_sentence(NO_SIGNAL, 6)
    'The alarm “No learning signal” cleared after round 6: it no longer holds.'
    >>> cleared_sentence(QUIET, 9)
    'The alarm “The run went quiet” cleared after round 9: a round came.'
    """
    why = "a round came" if kind == QUIET else "it no longer holds"
    return f"The alarm “{TITLES.get(kind, kind)}” cleared after round {number}: {why}."
