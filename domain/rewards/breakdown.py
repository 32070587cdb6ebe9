"""001's Score Breakdown of an evaluation: accuracy, accuracy strict, format and answered, shares in [0, 1].

accuracy mirrors the reward's own judgement (the `correct` part of a verifiable task, else the score itself);
accuracy strict counts a right answer only when it is stated on its own in the required place (the `strict`
part); format is the share shaped <think>/<answer>; answered is the share of answers the model completed: not
cut off and not empty. An answer cut off counts 0 everywhere, as it scores 0 as a reward (000).
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.rewards.types import AnswerScore


def breakdown(
    scores: Sequence[AnswerScore], answers: Sequence[str], cut_off: Sequence[bool]
) -> dict[str, float]:
    """The breakdown of one evaluation; `accuracy_strict` and `format` only where the reward has those parts.

    >>> from domain.rewards.types import AnswerScore as S
    >>> right = S(0.9, parts={"correct": 1.0, "format": 0.0, "strict": 1.0})
    >>> breakdown([right, S(0.0)], ["89", ""], [False, False])
    {'score': 0.45, 'accuracy': 0.5, 'accuracy_strict': 0.5, 'format': 0.0, 'answered': 0.5}
    """
    if not len(scores) == len(answers) == len(cut_off):
        raise ValueError("breakdown needs one answer and one cut-off flag per score.")
    if not scores:
        return {"score": 0.0, "accuracy": 0.0, "answered": 0.0}
    pairs = zip(answers, cut_off, strict=True)
    completed = [not was_cut and bool(answer.strip()) for answer, was_cut in pairs]

    def share(part: str | None) -> float:
        total = 0.0
        for scored, was_cut in zip(scores, cut_off, strict=True):
            if was_cut:
                continue
            total += scored.value if part is None else scored.parts.get(part, 0.0)
        return total / len(scores)

    has_parts = any("correct" in scored.parts for scored in scores)
    result = {"score": share(None), "accuracy": share("correct" if has_parts else None)}
    if any("strict" in scored.parts for scored in scores):
        result["accuracy_strict"] = share("strict")
    if any("format" in scored.parts for scored in scores):
        result["format"] = share("format")
    result["answered"] = sum(completed) / len(scores)
    return result
