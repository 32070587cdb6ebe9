"""What Browse a version shows: the counts of each split and its first few examples, prompt and reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.datasets.examples import content_text
from domain.datasets.version import SPLITS
from projections.catalog_reads import DatasetVersionRow
from verity.storage import FileStorage, read_rows

EXAMPLES_SHOWN = 5
TEXT_SHOWN = 1000  # characters of a message or reference; the rest is cut with an ellipsis


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


@dataclass(frozen=True)
class ShownExample:
    """The prompt (the conversation without its last message) and the reference (that last message)."""

    number: int
    prompt: list[Turn]
    reference: str


def first_examples(storage: FileStorage, version: DatasetVersionRow, limit: int = EXAMPLES_SHOWN) -> dict:
    """{"train": [ShownExample, ...], "validation": [...], "test": [...]} for the splits the version has."""
    return {
        split: [
            _shown(number, row) for number, row in enumerate(read_rows(storage, version.storage_key, split, limit), 1)
        ]
        for split in SPLITS
        if version.split_counts.get(split)
    }


def _shown(number: int, row: dict[str, Any]) -> ShownExample:
    prompt = [
        Turn(str(message.get("role", "")), _cut(content_text(message.get("content", "")))) for message in row["prompt"]
    ]
    return ShownExample(number, prompt, _cut(row["reference"]))


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_SHOWN else text[: TEXT_SHOWN - 1] + "…"
