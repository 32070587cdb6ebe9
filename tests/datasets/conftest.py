"""Helpers for the dataset tests: an upload as the app streams it, one bytes line at a time."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from domain.datasets.upload import UploadInvalid, parse_examples


def _jsonl(*records: object) -> list[bytes]:
    return [(json.dumps(record) + "\n").encode() for record in records]


def _refusal(lines: list[bytes]) -> str:
    with pytest.raises(UploadInvalid) as caught:
        list(parse_examples(lines))
    return caught.value.message


@pytest.fixture
def jsonl() -> Callable[..., list[bytes]]:
    """JSON lines of the records, as bytes."""
    return _jsonl


@pytest.fixture
def refusal() -> Callable[[list[bytes]], str]:
    """The message an upload of these lines is refused with."""
    return _refusal
