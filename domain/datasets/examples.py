"""One example of a dataset version, and how 000 derives its prompt and reference.

The prompt is the conversation without its last message; the reference is that last message, the
assistant's reply.
For a DPO preference pair the prompt is the shared prompt and the reference is the chosen answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

# The line shapes an upload may use: 000's chat messages and DPO pairs, and the columns of 001's tasks.
Shape = Literal["messages", "preference", "prompt_ground_truth", "question_answer"]
SHAPE_NAMES: dict[str, str] = {
    "messages": "a chat example",
    "preference": "a preference pair",
    "prompt_ground_truth": "a prompt with a ground_truth",
    "question_answer": "a question with an answer",
}
IMAGE_PART_TYPES = frozenset({"image", "image_url", "input_image"})


@dataclass(frozen=True)
class Example:
    """`prompt` is the messages before the reference; `rejected` is a preference pair's other answer."""

    line: int
    shape: Shape
    prompt: tuple[Mapping[str, Any], ...]
    reference: str
    has_images: bool = False
    rejected: str | None = None

    def to_row(self) -> dict[str, Any]:
        """The trainer's row: {"prompt": [...messages], "reference": text}, and "rejected" for a preference pair
        (DPO trains on it; RL and evaluations read prompt and reference only)."""
        row = {"prompt": [dict(message) for message in self.prompt], "reference": self.reference}
        if self.rejected is not None:
            row["rejected"] = self.rejected
        return row


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of content parts, joined."""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, Mapping) and _is_text(part))


def content_has_images(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") in IMAGE_PART_TYPES for part in content
    )


def messages_have_images(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(content_has_images(message.get("content")) for message in messages)


def _is_text(part: Mapping[str, Any]) -> bool:
    return part.get("type") in (None, "text", "input_text") and isinstance(part.get("text"), str)
