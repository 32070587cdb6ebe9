"""A re-scoring: stored answers (a run's round-NNN.jsonl rollouts, or a probe's answers file, in the same format:
trainer/rollouts.py) scored again with another reward. Nothing is sampled and no model loads; the stored files are
only read.

`python -m trainer rescore SPEC.json` writes progress records on stdout (one JSON line each): `rescoring_started`,
then `rescoring_scored` (the summary, domain/rescorings/summary.py) or `failed` (in words). Every answer, with its
old and new score, goes to storage at rescorings/<id>/answers.jsonl, one line each. The reward is built as a run
builds it (trainer/reward.py: a custom metric runs in the sandbox) and applied as a run applies it
(trainer/score_rules.py): a cut-off answer scores 0 and is not graded, a metric failure scores 0, a score is clamped
to [0, 1] and kept as a float32, as a round's reward tensor keeps it, so an unchanged score compares equal.
"""

from __future__ import annotations

import json
import logging
import struct
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trainer.progress import attempted, write_json_line
from trainer.score_rules import reward_of
from trainer.spec import RewardSpec, Storage

log = logging.getLogger(__name__)
GROUPS_LISTED = 200  # as domain/rescorings/summary.py keeps them


@dataclass(frozen=True)
class StoredAnswers:
    """One file of stored answers: a run's round (its rollout file's key) or a probe's answers (its round 1)."""

    round: int
    key: str


@dataclass(frozen=True)
class RescoreSpec:
    rescoring_id: str
    files: list[StoredAnswers]
    reward: RewardSpec
    storage: Storage

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RescoreSpec:
        return cls(rescoring_id=data["rescoring_id"], files=[StoredAnswers(**f) for f in data["files"]],
                   reward=RewardSpec(**data["reward"]), storage=Storage(**data["storage"]))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Rescored:
    """One answer, its old score (as stored) and its new one."""

    round: int
    prompt: int  # its line in the round's file
    answer: int  # its place among the prompt's answers
    text: str
    reference: str
    old: float
    new: float = 0.0
    cut_off: bool = False
    failure: str | None = None

    @property
    def moved(self) -> bool:
        return self.new != self.old


@dataclass
class RoundRescored:
    round: int
    groups: list[list[Rescored]] = field(default_factory=list)  # [prompts][answers]


class RescoreFailed(RuntimeError):
    """The re-scoring fails with this message, in words."""


def as_float32(value: float) -> float:
    """A score as a round's float32 reward tensor keeps it.

    >>> as_float32(0.1), as_float32(1.0)
    (0.10000000149011612, 1.0)
    """
    return struct.unpack("f", struct.pack("f", value))[0]


def rescore(spec: RescoreSpec, emit=write_json_line) -> bool:
    """Read, score, write the answers; every outcome is also a progress record. Returns whether it succeeded."""
    emit({"type": "rescoring_started", "files": len(spec.files)})
    summary = attempted(lambda: _rescore(spec), RescoreFailed, "re-scoring", emit)
    if summary is None:
        return False
    emit({"type": "rescoring_scored", "summary": summary})
    return True


def _rescore(spec: RescoreSpec) -> dict[str, Any]:
    from domain.rewards.config import NOT_A_REWARD
    from trainer.reward import build_reward, try_reward_on_reference
    from trainer.storage import open_storage

    metric = str(spec.reward.config.get("metric", ""))
    if metric in NOT_A_REWARD:
        raise RescoreFailed(f"The {NOT_A_REWARD[metric]} can't be an RL reward. Choose a reward metric.")
    storage = open_storage(spec.storage)
    rounds, missing = read_stored_answers(storage, spec.files)
    if not rounds:
        raise RescoreFailed("The storage no longer holds any of these answers, so there is nothing to re-score.")
    first_reference = rounds[0].groups[0][0].reference
    grader = None
    try:
        grader = build_reward(spec.reward)
        try_reward_on_reference(spec.reward, grader, first_reference)  # as a run does, before any answer
        batches: Counter[str] | None = None
        for stored in rounds:
            batches = _grade_round(grader, stored, batches)
    except ValueError as problem:  # RewardUnusable: the reward can't score these references, in words
        raise RescoreFailed(str(problem)) from None
    finally:
        if grader is not None and hasattr(grader, "close"):
            grader.close()  # a custom metric's sandbox processes
    summary = rescore_summary(rounds, missing)
    summary["sandbox_batches"] = dict(sorted(batches.items())) if batches is not None else None
    summary["answers_key"] = _write_answers(storage, spec.rescoring_id, rounds)
    return summary


def read_stored_answers(storage: Any, files: list[StoredAnswers]) -> tuple[list[RoundRescored], list[int]]:
    """Every stored answer with its old score; the rounds whose file the storage no longer holds apart."""
    rounds, missing = [], []
    for stored in files:
        try:
            raw = storage.get_bytes(stored.key)
        except FileNotFoundError:
            missing.append(stored.round)
            continue
        read = RoundRescored(stored.round)
        for p, line in enumerate(raw.decode().splitlines()):
            if not line.strip():
                continue
            data = json.loads(line)
            read.groups.append([
                Rescored(stored.round, p, j, a["answer"], str(data["reference"]), float(a["reward"]),
                         cut_off=bool(a.get("cut_off")))
                for j, a in enumerate(data["answers"])
            ])
        if read.groups:
            rounds.append(read)
    return rounds, missing


def _grade_round(grader: Any, stored: RoundRescored, batches: Counter[str] | None) -> Counter[str] | None:
    """A round's answers graded in one call (a custom metric's sandbox runs its batches in parallel); → the
    sandbox's batches so far, by outcome (None for a built-in reward)."""
    from trainer.sandbox import SandboxedMetric

    to_grade = [a for group in stored.groups for a in group if not a.cut_off]
    before = Counter(grader.batch_outcomes) if isinstance(grader, SandboxedMetric) else None
    scores = grader.score_batch([a.text for a in to_grade], [a.reference for a in to_grade]) if to_grade else []
    for answer, score in zip(to_grade, scores, strict=True):
        answer.failure = score.failure
        answer.new = as_float32(reward_of(score))
    if before is None:
        return batches
    return (batches or Counter()) + (Counter(grader.batch_outcomes) - before)


def _varied(scores: list[float]) -> bool:
    return max(scores) != min(scores)  # trainer/grpo.py's varied_groups: GRPO learns only from these


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 6) if values else 0.0


def rescore_summary(rounds: list[RoundRescored], missing: list[int]) -> dict[str, Any]:
    """The numbers a re-scoring's event keeps (domain/rescorings/summary.py), less the answers' key and batches.

    >>> def group(r, p, old, new):
    ...     return [Rescored(r, p, j, "a", "b", o, n) for j, (o, n) in enumerate(zip(old, new))]
    >>> one = RoundRescored(1, [group(1, 0, [0, 0], [1, 0]), group(1, 1, [1, 0], [1, 1])])
    >>> s = rescore_summary([one], [2])
    >>> s["moved"], s["raised"], s["lowered"], s["gained_signal"], s["lost_signal"], s["gained"], s["lost"]
    (2, 2, 0, 1, 1, [{'round': 1, 'prompt': 0}], [{'round': 1, 'prompt': 1}])
    >>> s["per_round"]["signal_old"], s["per_round"]["signal_new"], s["mean_new"], s["missing_rounds"]
    ([0.5], [0.5], 0.75, [2])
    """
    every = [a for stored in rounds for group in stored.groups for a in group]
    failures = Counter(a.failure for a in every if a.failure is not None)
    gained: list[dict[str, int]] = []
    lost: list[dict[str, int]] = []
    per_round: dict[str, list[Any]] = {key: [] for key in (
        "round", "groups", "answers", "moved", "signal_old", "signal_new", "mean_old", "mean_new")}
    for stored in rounds:
        answers = [a for group in stored.groups for a in group]
        varied_old = [_varied([a.old for a in group]) for group in stored.groups]
        varied_new = [_varied([a.new for a in group]) for group in stored.groups]
        for p, (before, now) in enumerate(zip(varied_old, varied_new, strict=True)):
            if now and not before:
                gained.append({"round": stored.round, "prompt": p})
            elif before and not now:
                lost.append({"round": stored.round, "prompt": p})
        count = len(stored.groups)
        for key, value in (("round", stored.round), ("groups", count), ("answers", len(answers)),
                           ("moved", sum(a.moved for a in answers)),
                           ("signal_old", sum(varied_old) / count), ("signal_new", sum(varied_new) / count),
                           ("mean_old", _mean([a.old for a in answers])),
                           ("mean_new", _mean([a.new for a in answers]))):
            per_round[key].append(value)
    moved = sum(a.moved for a in every)
    return {
        "answers": len(every),
        "graded": sum(not a.cut_off for a in every),
        "moved": moved,
        "moved_share": moved / len(every) if every else 0.0,
        "raised": sum(a.new > a.old for a in every),
        "lowered": sum(a.new < a.old for a in every),
        "mean_old": _mean([a.old for a in every]),
        "mean_new": _mean([a.new for a in every]),
        "groups": sum(per_round["groups"]),
        "gained_signal": len(gained),
        "lost_signal": len(lost),
        "gained": gained[:GROUPS_LISTED],
        "lost": lost[:GROUPS_LISTED],
        "metric_failures": sum(failures.values()),
        "failures_by_kind": dict(sorted(failures.items())),
        "missing_rounds": list(missing),
        "per_round": per_round,
    }


def answer_line(answer: Rescored) -> str:
    """One line of the answers file: where the answer was (round, prompt, answer), its text and reference, and
    its old and new score."""
    return json.dumps({
        "round": answer.round, "prompt": answer.prompt, "answer": answer.answer, "text": answer.text,
        "reference": answer.reference, "old": answer.old, "new": answer.new, "cut_off": answer.cut_off,
        "failure": answer.failure,
    })


def _write_answers(storage: Any, rescoring_id: str, rounds: list[RoundRescored]) -> str:
    key = f"rescorings/{rescoring_id}/answers.jsonl"  # domain/rescorings/summary.py's answers_key
    lines = [answer_line(a) for stored in rounds for group in stored.groups for a in group]
    storage.put_bytes(key, ("\n".join(lines) + "\n").encode())
    return key


def rescore_from_file(path: str) -> int:
    spec = RescoreSpec.from_dict(json.loads(Path(path).read_text()))
    return 0 if rescore(spec) else 1
