"""What a scored re-scoring keeps in its event: counts for the whole re-scoring and a few numbers per round, never
the answers (those go to a file in the organization's storage, `answers_key`, one line per answer with its old and
new score).

The trainer measures it (trainer/rescore.py); the domain checks its shape here before it is recorded:

- `answers`, `graded` (answers the new reward graded: a cut-off answer scores 0 ungraded, as in a run);
- `moved` (answers whose score changed), `moved_share`, `raised`, `lowered`, `mean_old`, `mean_new`;
- `groups` (a prompt's answers in one round), `gained_signal` (groups whose answers all scored alike before and
  differ now: GRPO learns from them under the new reward only), `lost_signal` (the other way round), and the
  first GROUPS_LISTED of each as {"round", "prompt"} in `gained` and `lost`;
- `per_round`: parallel lists, one item per round read: `round`, `groups`, `answers`, `moved`, `signal_old`,
  `signal_new` (the share of its groups whose answers differ, a run's round "signal"), `mean_old`, `mean_new`;
- `metric_failures`, `failures_by_kind`, `sandbox_batches` (a custom metric's batches by outcome, or None);
- `missing_rounds`: rounds whose answers the storage no longer holds (read past, named on the page);
- `answers_key`: the answers file's key in the storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GROUPS_LISTED = 200
PER_ROUND = ("round", "groups", "answers", "moved", "signal_old", "signal_new", "mean_old", "mean_new")


def answers_key(rescoring_id: str) -> str:
    """
    >>> answers_key("r1")
    'rescorings/r1/answers.jsonl'
    """
    return f"rescorings/{rescoring_id}/answers.jsonl"


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"A re-scoring's {name} is a count, not {value!r}.")
    return value


def _share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"A re-scoring's {name} is a share from 0 to 1, not {value!r}.")
    return float(value)


def _groups(value: Any, name: str) -> list[dict[str, int]]:
    if not isinstance(value, list):
        raise ValueError(f"A re-scoring's {name} groups are a list.")
    return [{"round": _count(g.get("round"), "round"), "prompt": _count(g.get("prompt"), "prompt")}
            for g in value[:GROUPS_LISTED]]


def checked_summary(summary: Mapping[str, Any], rounds: list[int]) -> dict[str, Any]:
    """The summary as recorded, or ValueError in words: only the re-scoring's `rounds`, and counts that add up.

    >>> good = {"answers": 4, "graded": 4, "moved": 1, "moved_share": 0.25, "raised": 1, "lowered": 0,
    ...         "mean_old": 0.25, "mean_new": 0.5, "groups": 2, "gained_signal": 1, "lost_signal": 0,
    ...         "gained": [{"round": 1, "prompt": 1}], "lost": [], "metric_failures": 0, "failures_by_kind": {},
    ...         "sandbox_batches": None, "missing_rounds": [], "answers_key": "rescorings/r/answers.jsonl",
    ...         "per_round": {"round": [1], "groups": [2], "answers": [4], "moved": [1], "signal_old": [0.5],
    ...                       "signal_new": [1.0], "mean_old": [0.25], "mean_new": [0.5]}}
    >>> checked_summary(good, [1])["per_round"]["signal_new"]
    [1.0]
    >>> checked_summary(good, [2])
    Traceback (most recent call last):
    ...
    ValueError: A re-scoring of rounds 2 can't report round 1.
    >>> checked_summary({**good, "moved": 5}, [1])
    Traceback (most recent call last):
    ...
    ValueError: A re-scoring's moved answers are at most its answers, and its rounds' moved answers add up to them.
    """
    per_round = summary.get("per_round")
    if not isinstance(per_round, Mapping) or any(not isinstance(per_round.get(key), list) for key in PER_ROUND):
        raise ValueError(f"A re-scoring's per-round numbers ({', '.join(PER_ROUND)}) are lists.")
    read = [_count(r, "round") for r in per_round["round"]]
    if any(len(per_round[key]) != len(read) for key in PER_ROUND):
        raise ValueError("A re-scoring's per-round numbers have one item per round.")
    for number in read:
        if number not in rounds:
            raise ValueError(f"A re-scoring of rounds {', '.join(map(str, rounds))} can't report round {number}.")
    answers, moved = _count(summary.get("answers"), "answer count"), _count(summary.get("moved"), "moved count")
    if sum(_count(n, "answer count") for n in per_round["answers"]) != answers:
        raise ValueError("A re-scoring's rounds' answers add up to its answers.")
    if moved > answers or sum(_count(n, "moved count") for n in per_round["moved"]) != moved:
        raise ValueError("A re-scoring's moved answers are at most its answers, and its rounds' moved answers add "
                         "up to them.")
    groups = _count(summary.get("groups"), "group count")
    if sum(_count(n, "group count") for n in per_round["groups"]) != groups:
        raise ValueError("A re-scoring's rounds' groups add up to its groups.")
    gained, lost = _count(summary.get("gained_signal"), "gained count"), _count(summary.get("lost_signal"),
                                                                                 "lost count")
    if gained + lost > groups:
        raise ValueError("A re-scoring's groups that gain or lose signal are at most its groups.")
    kinds = summary.get("failures_by_kind") or {}
    if not isinstance(kinds, Mapping):
        raise ValueError("A re-scoring's metric failures by kind are counts by kind.")
    return {
        "answers": answers,
        "graded": _count(summary.get("graded"), "graded answer count"),
        "moved": moved,
        "moved_share": _share(summary.get("moved_share"), "moved share"),
        "raised": _count(summary.get("raised"), "raised count"),
        "lowered": _count(summary.get("lowered"), "lowered count"),
        "mean_old": _share(summary.get("mean_old"), "old mean score"),
        "mean_new": _share(summary.get("mean_new"), "new mean score"),
        "groups": groups,
        "gained_signal": gained,
        "lost_signal": lost,
        "gained": _groups(summary.get("gained"), "gaining"),
        "lost": _groups(summary.get("lost"), "losing"),
        "metric_failures": _count(summary.get("metric_failures"), "metric failure count"),
        "failures_by_kind": {str(k): _count(v, "failure count") for k, v in kinds.items()},
        "sandbox_batches": dict(summary["sandbox_batches"]) if summary.get("sandbox_batches") else None,
        "missing_rounds": [_count(r, "round") for r in summary.get("missing_rounds") or []],
        "answers_key": str(summary.get("answers_key") or ""),
        "per_round": {
            "round": read,
            **{key: [_count(n, key) for n in per_round[key]] for key in ("groups", "answers", "moved")},
            **{key: [_share(s, key.replace("_", " ")) for s in per_round[key]]
               for key in ("signal_old", "signal_new", "mean_old", "mean_new")},
        },
    }
