"""In an evaluation a custom metric that fails on an answer fails that answer's whole batch (000, "Custom metrics":
"that answer scores 0 and counts as a failure, where an evaluation fails the whole batch").

A batch is the sandbox's: up to BATCH_SIZE graded answers in a row. Every answer of a batch in which the metric
raised, returned something that is not a number from 0 to 1, ran out of time or memory or printed too much scores
0 and counts as failed, so an evaluation's score never rests on a metric that broke halfway through a batch.
The sandbox's words for a failure may quote the answer after their first ": " ("KeyError at line 4: 'the
answer'"): those go only into the evaluation's per-example results, which hold the answers anyway; the summary
keeps the words before it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.rewards.custom import BATCH_SIZE
from domain.rewards.types import AnswerScore, FailureKind

RESULT_WORDS = "returned something that is not a number from 0 to 1"
KIND_WORDS: dict[str, str] = {
    "execution": "raised an error",
    "result": RESULT_WORDS,
    "timeout": "ran out of time",
    "memory": "ran out of memory",
    "output": "printed too much",
}
FAILED_TO_LOAD = "the metric failed to load: "
WORDS_CHARACTERS = 120
BATCHES_NAMED = 5  # per error, in the summary
ERRORS_NAMED = 3


def error_words(kind: str, detail: str) -> str:
    """The metric's error in words that quote no answer.

    >>> error_words("execution", "KeyError at line 4: 'what the model wrote'")
    'KeyError at line 4'
    >>> error_words("result", "'what the model wrote'")
    'returned something that is not a number from 0 to 1'
    >>> error_words("execution", "the metric failed to load: NameError at line 2: name 'x' is not defined")
    'the metric failed to load (NameError at line 2)'
    """
    if kind == "result":
        return RESULT_WORDS
    if detail.startswith(FAILED_TO_LOAD):
        cause = detail.removeprefix(FAILED_TO_LOAD).split(": ", 1)[0].strip()
        return f"the metric failed to load ({cause[:WORDS_CHARACTERS]})" if cause else "the metric failed to load"
    head = detail.split(": ", 1)[0].strip()
    return head[:WORDS_CHARACTERS] or KIND_WORDS.get(kind, "failed")


def answer_error(kind: str, detail: str) -> str:
    """An answer's own failure in the metric's words, for the evaluation's results (they may quote the answer)."""
    if kind == "result":
        return f"{RESULT_WORDS}: {detail}" if detail else RESULT_WORDS
    return detail or KIND_WORDS.get(kind, "failed")


@dataclass(frozen=True)
class BatchScored:
    """One answer's score once its batch is judged; `error` says why it failed (None when it did not)."""

    score: AnswerScore
    error: str | None = None


@dataclass(frozen=True)
class FailedBatch:
    number: int  # from 1, in the order the answers were graded
    kind: FailureKind  # of the batch's first failure
    error: str  # error_words of that failure


@dataclass(frozen=True)
class MetricFailures:
    """How many graded answers counted as failed, of how many, and which batches failed with what error."""

    failed: int
    graded: int
    batches: tuple[FailedBatch, ...]

    @property
    def every_answer(self) -> bool:
        return self.graded > 0 and self.failed == self.graded

    def to_dict(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "graded": self.graded,
            "batches": [{"batch": b.number, "kind": b.kind, "error": b.error} for b in self.batches],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricFailures:
        """Raises ValueError when the counts or batches do not add up."""
        try:
            failed, graded = int(data["failed"]), int(data["graded"])
            batches = tuple(
                FailedBatch(int(b["batch"]), b["kind"], str(b["error"])) for b in data.get("batches", [])
            )
        except (KeyError, TypeError, ValueError) as problem:
            raise ValueError(f"The metric failures do not read as counts and batches ({problem}).") from None
        if not 0 <= failed <= graded or any(b.kind not in KIND_WORDS or b.number < 1 for b in batches):
            raise ValueError(f"The metric failures do not add up: {failed} of {graded} answers.")
        return cls(failed, graded, batches)

    def note(self) -> str:
        """What the evaluation says of them, e.g. "The custom metric failed on 8 of 32 answers (batch 2: KeyError at
        line 4). Those answers score 0; make the metric handle any text."."""
        which = _batches_by_error(self.batches)
        if self.every_answer:
            return (
                f"The custom metric failed on all {self.graded} answers ({which}), so the evaluation has no score. "
                "Make the metric handle any text."
            )
        return (
            f"The custom metric failed on {self.failed} of {self.graded} answers ({which}). Those answers score 0; "
            "make the metric handle any text."
        )


def fail_whole_batches(
    scores: Sequence[AnswerScore], details: Sequence[str], batch_size: int = BATCH_SIZE
) -> tuple[list[BatchScored], MetricFailures]:
    """Each graded answer's score once a failure fails its whole batch, and the failures' summary.

    `details` are the metric's words for each failure ("" where there is none), in the order of `scores`.

    >>> from domain.rewards.types import AnswerScore as S
    >>> scores, details = [S(1.0), S.failed("execution"), S(0.5)], ["", "KeyError at line 4: 'x'", ""]
    >>> scored, failures = fail_whole_batches(scores, details, batch_size=2)
    >>> [(s.score.value, s.score.failure, s.error) for s in scored]
    [(0.0, 'execution', 'Another answer of batch 1 failed: KeyError at line 4'), \
(0.0, 'execution', "KeyError at line 4: 'x'"), (0.5, None, None)]
    >>> failures.note()
    'The custom metric failed on 2 of 3 answers (batch 1: KeyError at line 4). Those answers score 0; make the metric \
handle any text.'
    """
    if len(scores) != len(details):
        raise ValueError(f"{len(scores)} scores but {len(details)} details: one detail per score.")
    judged: list[BatchScored] = []
    failed_batches: list[FailedBatch] = []
    for start in range(0, len(scores), batch_size):
        batch = list(zip(scores[start : start + batch_size], details[start : start + batch_size], strict=True))
        first = next(((s.failure, d) for s, d in batch if s.failure is not None), None)
        if first is None:
            judged.extend(BatchScored(score) for score, _ in batch)
            continue
        kind, detail = first
        failed = FailedBatch(start // batch_size + 1, kind, error_words(kind, detail))
        failed_batches.append(failed)
        for score, own_detail in batch:
            if score.failure is not None:
                judged.append(BatchScored(AnswerScore.failed(score.failure), answer_error(score.failure, own_detail)))
            else:
                words = f"Another answer of batch {failed.number} failed: {failed.error}"
                judged.append(BatchScored(AnswerScore.failed(kind), words))
    count = sum(s.score.failure is not None for s in judged)
    return judged, MetricFailures(count, len(scores), tuple(failed_batches))


def _batches_by_error(batches: Sequence[FailedBatch]) -> str:
    """ "batch 2: KeyError at line 4; batches 3 and 5: ran past 30 seconds", the first few errors only."""
    by_error: dict[str, list[int]] = {}
    for batch in batches:
        by_error.setdefault(batch.error, []).append(batch.number)
    groups = list(by_error.items())
    parts = [f"{_numbers(numbers)}: {error}" for error, numbers in groups[:ERRORS_NAMED]]
    rest = sum(len(numbers) for _, numbers in groups[ERRORS_NAMED:])
    if rest:
        parts.append(f"{rest} more batch{'' if rest == 1 else 'es'} with other errors")
    return "; ".join(parts)


def _numbers(numbers: Sequence[int]) -> str:
    if len(numbers) == 1:
        return f"batch {numbers[0]}"
    shown = [str(n) for n in numbers[:BATCHES_NAMED]]
    more = len(numbers) - len(shown)
    if more:
        return f"batches {', '.join(shown)} and {more} more"
    return f"batches {', '.join(shown[:-1])} and {shown[-1]}"
