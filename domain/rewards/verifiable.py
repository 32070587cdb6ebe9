"""The rows of the built-in verifiable tasks (001): Math Pairs generated from the run's seed, GSM8K and boxed
answers read from records of their own shapes. A row is what the trainer samples from:
{"prompt": [{"role": "user", "content": question}], "reference": answer}.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from domain.rewards.config import SYNTHETIC_PROMPTS_DEFAULT
from domain.rewards.extract import gsm8k_reference_number
from domain.rewards.math_pairs import math_pairs_problem
from domain.rewards.references import boxed_ground_truth_problem

VALIDATION_PROMPTS = 128  # the validation sample of a run is at most this many prompts (000)
HELD_OUT_PROBLEMS = 1000  # the Math Pairs held-out benchmark: the most problems an evaluation may ask for
HELD_OUT_SKIPS_SEED = 0  # the held-out problems were drawn around the default seed's own rows


class Message(TypedDict):
    role: str
    content: Any  # text, or a list of content parts


class Row(TypedDict):
    prompt: list[Message]
    reference: str


class RowsInvalid(ValueError):
    """A record that can't be a row of the task; `message` names the record (from 1) and the problem."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def user_row(question: str, reference: str) -> Row:
    return {"prompt": [{"role": "user", "content": question}], "reference": reference}


def math_pairs_rows(
    seed: int | str, count: int, *, validation_count: int = VALIDATION_PROMPTS
) -> tuple[list[Row], list[Row]]:
    """`count` training rows and `validation_count` validation rows, the same for the same seed.

    Validation questions are drawn first and all differ; no training row asks a validation question, and no row
    is a Math Pairs held-out benchmark problem, whatever the seed or the count. Training rows may repeat a
    question once `count` nears the number of distinct problems (about 7,000 outside the benchmark).
    """
    return _drawn_rows(seed, count, validation_count, _held_out_questions())


def _drawn_rows(seed: int | str, count: int, validation_count: int,
                skipped: frozenset[str]) -> tuple[list[Row], list[Row]]:
    if count < 1 or validation_count < 0:
        raise ValueError("math_pairs_rows needs at least one training row and no negative validation count.")
    rng = random.Random(f"math-pairs:{seed}")
    validation: dict[str, str] = {}
    while len(validation) < validation_count:
        question, answer = math_pairs_problem(rng)
        if question not in skipped:
            validation.setdefault(question, answer)
    training: list[Row] = []
    while len(training) < count:
        question, answer = math_pairs_problem(rng)
        if question not in validation and question not in skipped:
            training.append(user_row(question, answer))
    return training, [user_row(question, answer) for question, answer in validation.items()]


@functools.cache
def math_pairs_held_out() -> tuple[tuple[str, str], ...]:
    """The Math Pairs held-out benchmark's problems, (question, reference), the same everywhere, in order."""
    # Drawn from their own seed, skipping the default seed's own rows: the benchmark was first defined that way,
    # and keeping it so keeps every baseline scored on it comparable. Every other draw then skips these.
    training, validation = _drawn_rows(HELD_OUT_SKIPS_SEED, SYNTHETIC_PROMPTS_DEFAULT, VALIDATION_PROMPTS,
                                       frozenset())
    seen = {row["prompt"][0]["content"] for row in (*training, *validation)}
    rng = random.Random("math-pairs:held-out")
    problems: list[tuple[str, str]] = []
    while len(problems) < HELD_OUT_PROBLEMS:
        question, answer = math_pairs_problem(rng)
        if question not in seen:
            seen.add(question)
            problems.append((question, answer))
    return tuple(problems)


@functools.cache
def _held_out_questions() -> frozenset[str]:
    return frozenset(question for question, _ in math_pairs_held_out())


def gsm8k_rows(records: Iterable[Mapping[str, Any]]) -> list[Row]:
    """Rows from GSM8K's own records ({"question", "answer": "... #### 72"}) or rows of an uploaded version.

    Raises RowsInvalid at the first record without a final number.
    """
    rows = []
    for number, record in enumerate(records, start=1):
        row = _row(record, number, question_key="question", answer_key="answer")
        if gsm8k_reference_number(row["reference"]) is None:
            raise RowsInvalid(f'Record {number}: the answer has no final number (a number, or "#### 72").')
        rows.append(row)
    return rows


def boxed_rows(records: Iterable[Mapping[str, Any]]) -> list[Row]:
    """Rows from records with a `prompt` (text or messages) and a `ground_truth`, or rows of a version."""
    rows = []
    for number, record in enumerate(records, start=1):
        row = _row(record, number, question_key="prompt", answer_key="ground_truth")
        problem = boxed_ground_truth_problem(row["reference"])
        if problem is not None:
            raise RowsInvalid(f"Record {number}: {problem}.")
        rows.append(row)
    return rows


def _row(record: Mapping[str, Any], number: int, *, question_key: str, answer_key: str) -> Row:
    """A row from the task's own columns, or a row already in the trainer's shape."""
    if isinstance(record.get("reference"), str) and isinstance(record.get("prompt"), list):
        return {"prompt": list(record["prompt"]), "reference": record["reference"]}
    question, answer = record.get(question_key), record.get(answer_key)
    if not isinstance(answer, str):
        raise RowsInvalid(f'Record {number}: it needs a text "{answer_key}".')
    if isinstance(question, str) and question.strip():
        return user_row(question, answer)
    if isinstance(question, list) and question and all(_is_message(message) for message in question):
        return {"prompt": [dict(message) for message in question], "reference": answer}  # type: ignore[misc]
    raise RowsInvalid(f'Record {number}: it needs a "{question_key}", as text or as messages.')


def _is_message(message: Any) -> bool:
    return isinstance(message, Mapping) and isinstance(message.get("role"), str) and "content" in message
