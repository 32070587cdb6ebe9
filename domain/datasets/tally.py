"""Counting an upload's examples while they stream past, for the version that will hold them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from domain.datasets.examples import Example


@dataclass
class UploadTally:
    """Fed each example as the app writes it to storage; nothing of the examples is kept.

    >>> from domain.datasets.upload import parse_examples
    >>> tally = UploadTally()
    >>> stored = [e.to_row() for e in tally.count(parse_examples([b'{"question": "q", "answer": "1"}']))]
    >>> tally.examples, tally.shape, tally.has_images
    (1, 'question_answer', False)
    """

    examples: int = 0
    shape: str | None = None
    has_images: bool = False
    preference_pairs: int = 0

    def add(self, example: Example) -> None:
        self.examples += 1
        self.shape = self.shape or example.shape
        self.has_images = self.has_images or example.has_images
        self.preference_pairs += example.rejected is not None

    def count(self, examples: Iterable[Example]) -> Iterator[Example]:
        for example in examples:
            self.add(example)
            yield example
