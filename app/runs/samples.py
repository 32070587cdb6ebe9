"""Samples (000): the first three prompts of a round, read from its rollout file in storage, shortened.

A rollout line holds {"prompt": [messages], "reference": text, "answers": [{"answer", "reward", "cut_off",
"failure", "tokens"}]} (trainer/rollouts.py). A prompt shows its last user message; text is shortened, prompts
after 1,000 characters, references and answers after 600.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from projections.rows import RolloutFileRow

PROMPTS_SHOWN = 3
ROUNDS_OFFERED = 10
PROMPT_CHARACTERS = 1_000
ANSWER_CHARACTERS = 600


class SamplesUnreadable(Exception):
    """The reason a round's samples can't be read, in words for the page."""


@dataclass(frozen=True)
class SampledAnswer:
    text: str
    score: float
    cut_off: bool
    failure: str | None
    tokens: int | None


@dataclass(frozen=True)
class PromptSample:
    prompt: str
    reference: str
    answers: list[SampledAnswer]

    @property
    def mean_score(self) -> float:
        return sum(a.score for a in self.answers) / len(self.answers) if self.answers else 0.0


def shorten(text: str, limit: int) -> str:
    """
    >>> shorten("abcdef", 4)
    'abcd…'
    """
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def last_user_message(messages: Any) -> str:
    if isinstance(messages, str):
        return messages
    users = [m.get("content", "") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1] if users else ""
    if isinstance(content, list):  # content parts: keep the text ones
        content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def offered_rounds(files: list[RolloutFileRow]) -> list[int]:
    """The Round picker: the latest ten rounds with a rollout file, newest first."""
    return sorted((f.round_number for f in files), reverse=True)[:ROUNDS_OFFERED]


def read_round(storage: Any, files: list[RolloutFileRow], round_number: int) -> list[PromptSample]:
    """The round's first three prompts; raises SamplesUnreadable with the reason."""
    return _read(storage, files, round_number, range(PROMPTS_SHOWN))


def read_prompt(storage: Any, files: list[RolloutFileRow], round_number: int, position: int) -> PromptSample:
    """The prompt at `position` in the round's rollout file (the Prompts tab's opened prompt); raises
    SamplesUnreadable with the reason."""
    (sample,) = _read(storage, files, round_number, range(position, position + 1), missing_line=True)
    return sample


def _read(storage: Any, files: list[RolloutFileRow], round_number: int, positions: range,
          missing_line: bool = False) -> list[PromptSample]:
    """The prompts at `positions` (of the non-empty lines) of the round's rollout file; `missing_line`: a position
    the file does not reach is unreadable rather than left out."""
    if storage is None:
        raise SamplesUnreadable("this console has no storage configured.")
    path = next((f.path for f in files if f.round_number == round_number), None)
    if path is None:
        raise SamplesUnreadable(f"round {round_number} has no rollout file.")
    try:
        if not storage.exists(path):
            raise SamplesUnreadable(f"{path} is not in the storage (yet).")
        lines = []
        for n, line in enumerate(line for line in storage.read_lines(path) if line.strip()):
            if n in positions:
                lines.append(line)
            if n + 1 >= positions.stop:
                break
    except SamplesUnreadable:
        raise
    except Exception as problem:  # the storage's own error (a bucket that refuses, a folder that vanished)
        raise SamplesUnreadable(f"{path} could not be read ({type(problem).__name__}: {problem}).") from problem
    if missing_line and len(lines) < len(positions):
        raise SamplesUnreadable(f"{path} has no line {positions.start + 1}.")
    try:
        return [_sample(json.loads(line)) for line in lines]
    except (ValueError, KeyError, TypeError, AttributeError) as problem:
        raise SamplesUnreadable(f"{path} is not a rollout file ({type(problem).__name__}).") from problem


def _sample(line: dict[str, Any]) -> PromptSample:
    return PromptSample(
        prompt=shorten(last_user_message(line["prompt"]), PROMPT_CHARACTERS),
        reference=shorten(str(line["reference"]), ANSWER_CHARACTERS),
        answers=[
            SampledAnswer(
                text=shorten(str(a["answer"]), ANSWER_CHARACTERS),
                score=float(a["reward"]),
                cut_off=bool(a.get("cut_off")),
                failure=a.get("failure"),
                tokens=a.get("tokens"),
            )
            for a in line["answers"]
        ],
    )


def samples_context(read_models: Any, identity: Any, run: Any, storage: Any, round_number: int | None) -> dict:
    """The Samples part: the picker's rounds, the chosen one, whether it follows the latest, its prompts or why
    they could not be loaded."""
    files = read_models.samples(identity.organization_id, run.id, newest=ROUNDS_OFFERED)
    offered = offered_rounds(files)
    chosen = round_number if round_number is not None else (offered[0] if offered else None)
    if chosen is not None and chosen not in offered:  # an older round, asked for by its address
        files = read_models.samples(identity.organization_id, run.id)
    context: dict[str, Any] = {
        "sample_rounds": offered,
        "sample_round": chosen,
        "following_latest": bool(offered) and chosen == offered[0],
        "samples": [],
        "samples_error": None,
    }
    if chosen is not None:
        try:
            context["samples"] = read_round(storage, files, chosen)
        except SamplesUnreadable as problem:
            context["samples_error"] = str(problem)
    return context
