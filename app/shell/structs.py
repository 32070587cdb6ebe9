"""API answers built from read-model rows."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

AnswerT = TypeVar("AnswerT", bound=msgspec.Struct)


def from_row(answer: type[AnswerT], row: object, **given: Any) -> AnswerT:
    """`answer` with each of its fields that the row has by the same name copied from the row, and the rest
    `given` (what the answer adds, or names otherwise): the answers follow their rows without restating them
    field by field. A field in neither keeps its default."""
    copied = {name: getattr(row, name) for name in answer.__struct_fields__ if name not in given and hasattr(row, name)}
    return answer(**copied, **given)
