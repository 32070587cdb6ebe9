"""Reading an upload: one JSON example a line, streamed (memory stays flat however large the file).

`parse_examples` takes the file's lines as bytes and yields examples, raising UploadInvalid at the first bad
line with its number and the problem in words. A line is one of:
- chat messages: {"messages": [optional system, user, assistant, ..., user, assistant]} (000);
- a DPO preference pair: {"prompt": text or messages, "chosen": ..., "rejected": ...} (000);
- a prompt with a ground truth: {"prompt": text or messages, "ground_truth": text} (001's boxed answers);
- a question with an answer: {"question": text, "answer": "... #### 72"} (GSM8K's own shape, 001).
Every line of one file has the same shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from domain.datasets.examples import (
    IMAGE_PART_TYPES,
    SHAPE_NAMES,
    Example,
    Shape,
    content_has_images,
    content_text,
    messages_have_images,
)
from domain.datasets.image_sources import image_reference_problem, part_image_references

MAX_LINE_BYTES = 1024 * 1024
ROLES = ("system", "user", "assistant")
RL_REFUSES_IMAGES = (
    "RL trains on text, and this version has images. Choose a version in text only, or SFT or DPO."
)
EMPTY_FILE = "The file is empty: upload one JSON example a line."


class UploadInvalid(ValueError):
    """An upload that can't be a dataset version; `message` names the line and the problem."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class _LineProblem(Exception):
    """A problem found inside one line; parse_examples adds the line number."""


def parse_examples(lines: Iterable[bytes]) -> Iterator[Example]:
    """The examples of an upload, in order; blank lines are skipped.

    >>> [e.reference for e in parse_examples([b'{"question": "1+1?", "answer": "#### 2"}'])]
    ['#### 2']
    """
    first_shape: Shape | None = None
    first_line = 0
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE_BYTES:
            raise UploadInvalid(
                f"Line {number} is over 1 MiB: each example must fit in 1 MiB a line.", number
            )
        text = _decode(raw, number)
        if not text.strip():
            continue
        try:
            example = _example(_json_object(text), number)
        except _LineProblem as problem:
            raise UploadInvalid(f"Line {number}: {problem}", number) from None
        if first_shape is None:
            first_shape, first_line = example.shape, number
        elif example.shape != first_shape:
            raise UploadInvalid(
                f"Line {number}: it is {SHAPE_NAMES[example.shape]}, but line {first_line} is "
                f"{SHAPE_NAMES[first_shape]}. Use one format in a file.",
                number,
            )
        yield example
    if first_shape is None:
        raise UploadInvalid(EMPTY_FILE)


def _decode(raw: bytes, number: int) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UploadInvalid(
            f"Line {number} is not UTF-8 text (byte {error.start + 1}). Save the file as UTF-8.", number
        ) from None
    return text.removeprefix("\ufeff") if number == 1 else text


def _json_object(text: str) -> Mapping[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _LineProblem(f"not JSON ({error.msg} at column {error.colno}).") from None
    except RecursionError:
        raise _LineProblem("not JSON (nested too deeply).") from None
    if not isinstance(value, dict):
        raise _LineProblem(f'expected a JSON object such as {{"messages": [...]}}, not a {_kind(value)}.')
    return value


def _example(record: Mapping[str, Any], number: int) -> Example:
    top_level_images = bool(record.get("images"))
    if "messages" in record:
        example = _chat_example(record["messages"], number)
    elif "chosen" in record or "rejected" in record:
        example = _preference_pair(record, number)
    elif "ground_truth" in record:
        prompt = _prompt(record.get("prompt"), "prompt")
        reference = _text(record["ground_truth"], "ground_truth")
        example = Example(number, "prompt_ground_truth", prompt, reference, messages_have_images(prompt))
    elif "question" in record and "answer" in record:
        question = _text(record["question"], "question")
        prompt = ({"role": "user", "content": question},)
        example = Example(number, "question_answer", prompt, _text(record["answer"], "answer"))
    else:
        raise _LineProblem(
            'expected {"messages": [...]} or a preference pair {"prompt", "chosen", "rejected"}; '
            f"found the keys {', '.join(sorted(record)) or 'none'}."
        )
    _check_image_sources(record)
    if top_level_images and not example.has_images:
        return Example(example.line, example.shape, example.prompt, example.reference, True, example.rejected)
    return example


def _check_image_sources(record: Mapping[str, Any]) -> None:
    """Every image the example points at, in its messages' content parts or its "images", may be opened: see
    domain/datasets/image_sources.py for which addresses those are."""
    for key in ("messages", "prompt", "chosen", "rejected"):
        messages = record.get(key)
        if not isinstance(messages, list):
            continue
        for position, message in enumerate(messages, start=1):
            content = message.get("content") if isinstance(message, Mapping) else None
            if not isinstance(content, list):
                continue
            for number, part in enumerate(content, start=1):
                if isinstance(part, Mapping) and part.get("type") in IMAGE_PART_TYPES:
                    for reference in part_image_references(part):
                        _check_image(reference, f"the image of part {number} of message {position} of {key}")
    images = record.get("images")
    listed = [images] if isinstance(images, str) else images if isinstance(images, list) else []
    for number, image in enumerate(listed, start=1):
        for reference in part_image_references(image) if isinstance(image, Mapping) else [image]:
            _check_image(reference, f"image {number} of images")


def _check_image(reference: Any, where: str) -> None:
    problem = image_reference_problem(reference)
    if problem is not None:
        raise _LineProblem(f"{where} {problem}")


def _chat_example(messages: Any, number: int) -> Example:
    checked = _messages(messages, "messages")
    if checked[-1]["role"] != "assistant":
        raise _LineProblem(
            "the last message must be the assistant's reply, the reference; "
            f"this one is from the {checked[-1]['role']}."
        )
    if len(checked) == 1 or (len(checked) == 2 and checked[0]["role"] == "system"):
        raise _LineProblem("the assistant's reply needs a user message before it.")
    prompt, last = checked[:-1], checked[-1]
    return Example(number, "messages", prompt, content_text(last["content"]), messages_have_images(checked))


def _preference_pair(record: Mapping[str, Any], number: int) -> Example:
    missing = [key for key in ("prompt", "chosen", "rejected") if key not in record]
    if missing:
        raise _LineProblem(
            f"a preference pair needs prompt, chosen and rejected; {', '.join(missing)} is missing."
        )
    prompt = _prompt(record["prompt"], "prompt")
    chosen, chosen_images = _answer(record["chosen"], "chosen")
    rejected, rejected_images = _answer(record["rejected"], "rejected")
    images = messages_have_images(prompt) or chosen_images or rejected_images
    return Example(number, "preference", prompt, chosen, images, rejected)


def _prompt(value: Any, key: str) -> tuple[Mapping[str, Any], ...]:
    """A prompt given as text (one user message) or as messages that end with a user turn."""
    if isinstance(value, str):
        if not value.strip():
            raise _LineProblem(f"{key} is empty.")
        return ({"role": "user", "content": value},)
    checked = _messages(value, key)
    if checked[-1]["role"] != "user":
        raise _LineProblem(f"{key} must end with a user message; its last is from the {checked[-1]['role']}.")
    return checked


def _answer(value: Any, key: str) -> tuple[str, bool]:
    """A preference pair's answer: text, or messages of which the last, from the assistant, is the answer."""
    if isinstance(value, str):
        return value, False
    if not isinstance(value, list) or not value:
        raise _LineProblem(f"{key} must be text or a list of messages ending with the assistant's answer.")
    last = _message(value[-1], key, len(value))
    if last["role"] != "assistant":
        raise _LineProblem(
            f"{key} must end with the assistant's answer; its last message is from the {last['role']}."
        )
    return content_text(last["content"]), content_has_images(last["content"])


def _messages(value: Any, key: str) -> tuple[Mapping[str, Any], ...]:
    """Messages in order: an optional system message, then user and assistant turns by turns, user first."""
    if not isinstance(value, list):
        raise _LineProblem(f"{key} must be a list of messages, not a {_kind(value)}.")
    if not value:
        raise _LineProblem(f"{key} is empty.")
    checked = tuple(_message(message, key, position) for position, message in enumerate(value, start=1))
    expected = "user"
    for position, message in enumerate(checked, start=1):
        role = message["role"]
        if role == "system" and position == 1:
            continue
        if role == "system":
            raise _LineProblem(f"message {position} of {key} is a system message; only the first may be.")
        if role != expected:
            raise _LineProblem(
                f"message {position} of {key} is from the {role}, but the {expected} speaks next: "
                "user and assistant take turns, the user first."
            )
        expected = "assistant" if role == "user" else "user"
    return checked


def _message(value: Any, key: str, position: int) -> Mapping[str, Any]:
    where = f"message {position} of {key}"
    if not isinstance(value, Mapping):
        raise _LineProblem(f"{where} must be an object with a role and a content, not a {_kind(value)}.")
    role = value.get("role")
    if role not in ROLES:
        shown = f"has the role {role!r}" if role is not None else "has no role"
        raise _LineProblem(f"{where} {shown}; use system, user or assistant.")
    content = value.get("content")
    if not isinstance(content, str) and not _content_parts(content):
        raise _LineProblem(f"{where} needs a content: text, or a list of content parts.")
    return value


def _content_parts(content: Any) -> bool:
    return isinstance(content, list) and all(isinstance(part, Mapping) and "type" in part for part in content)


def _text(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise _LineProblem(f"{key} must be text, not a {_kind(value)}.")
    return value


def _kind(value: Any) -> str:
    names = {dict: "object", list: "list", str: "text", bool: "true/false", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
