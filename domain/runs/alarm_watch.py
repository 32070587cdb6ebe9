"""What a run keeps of its rounds for its alarms (domain/runs/alarms.py reads it): the few numbers the rules read of
the last `ALARM_WINDOW` trained rounds (round 0 only validates), the run's highest token entropy and its slowest
round, so a run's state stays as small at round 1,000 as at 10."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The trends are read over the last 5 trained rounds: long enough that one noisy round does not decide (each end
# of a trend is the mean of its two rounds), short enough that an alarm comes while there is time to act.
ALARM_WINDOW = 5


def new_watch() -> dict[str, Any]:
    """What the rules keep of a run before its first round."""
    return {"rounds": [], "peak_entropy": None, "slowest_seconds": None}


def round_seconds(result: Mapping[str, Any]) -> float:
    """How long a round took, its parts together (its checkpoint's writing too)."""
    parts = ("sampling_seconds", "grading_seconds", "update_seconds", "validation_seconds", "checkpoint_seconds")
    return float(sum(result.get(part) or 0.0 for part in parts))


def watched(watch: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """The watch after a scored round (a RoundResult as a dict).

    >>> w = watched(new_watch(), {"round_number": 0, "validation_reward": 0.4, "validation_seconds": 3.0})
    >>> w
    {'rounds': [], 'peak_entropy': None, 'slowest_seconds': 3.0}
    >>> for n in range(1, 8):
    ...     w = watched(w, {"round_number": n, "reward": 0.5, "validation_reward": 0.4, "token_entropy": 1.0 / n})
    >>> [r["round"] for r in w["rounds"]], w["peak_entropy"]
    ([3, 4, 5, 6, 7], {'round': 1, 'value': 1.0})
    """
    slowest = max(watch["slowest_seconds"] or 0.0, round_seconds(result)) or None
    if result["round_number"] < 1:
        return {**watch, "slowest_seconds": slowest}
    figures = {
        "round": result["round_number"],
        "reward": result.get("reward"),
        "validation": result["validation_reward"],
        "signal": result.get("signal"),
        "cut_off": result.get("cut_off"),
        "tokens": result.get("mean_answer_tokens"),
        "entropy": result.get("token_entropy"),
        "accuracy": result.get("accuracy"),
    }
    peak = watch["peak_entropy"]
    entropy = figures["entropy"]
    if entropy is not None and (peak is None or entropy > peak["value"]):
        peak = {"round": figures["round"], "value": entropy}
    rounds = [*watch["rounds"], figures][-ALARM_WINDOW:]
    return {"rounds": rounds, "peak_entropy": peak, "slowest_seconds": slowest}


def watch_from_latest(latest_round: Mapping[str, Any] | None) -> dict[str, Any]:
    """The watch of a run whose snapshot was taken before runs had one: what its latest round tells (the window
    fills again within `ALARM_WINDOW` rounds)."""
    return watched(new_watch(), latest_round) if latest_round is not None else new_watch()
