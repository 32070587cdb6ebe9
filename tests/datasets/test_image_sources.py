"""A user uploads examples with images: an image may be a public web address or the image itself (a data URL);
an example pointing at the server's files or at an address only the server reaches is refused, line, message and
part named, before anything is stored."""

from __future__ import annotations

import pytest

from domain.datasets.image_sources import image_reference_problem
from domain.datasets.upload import parse_examples

PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=="
)
ALLOWED = "an image is an https:// or http:// address of a public host, or a data:image/...;base64 URL."


def asking(image: object, part_type: str = "image_url") -> dict:
    """A chat example whose user message shows one image, as OpenAI (image_url) or Hugging Face (image) put it."""
    part = {"type": part_type, "image_url": image} if part_type != "image" else {"type": "image", "image": image}
    content = [{"type": "text", "text": "What is this?"}, part]
    return {"messages": [{"role": "user", "content": content}, {"role": "assistant", "content": "A cat."}]}


@pytest.mark.parametrize(
    "image",
    [
        "https://images.example/cat.png",
        {"url": "http://images.example/cat.png?size=large"},
        "https://93.184.216.34/cat.png",  # a public address written as numbers
        "https://[2606:4700::6810:85e5]/cat.png",
        PNG,
        "https://localhost.example.com/cat.png",  # a name is not resolved: only localhost itself is loopback
    ],
)
def test_a_public_address_or_a_data_url_is_an_image_the_example_may_show(jsonl, image) -> None:
    (example,) = parse_examples(jsonl(asking(image)))
    assert example.has_images and image_reference_problem(image) is None


@pytest.mark.parametrize(
    ("image", "why"),
    [
        ("file:///etc/passwd", "is file:///etc/passwd: "),
        ("/etc/passwd", "is /etc/passwd: "),
        ("cat.png", "is cat.png: "),
        ("ftp://images.example/cat.png", "is ftp://images.example/cat.png: "),
        ("gopher://images.example/", "is gopher://images.example/: "),
        ("data:text/html;base64,PHNjcmlwdD4=", "is data:text/html;base64,...: "),
        ("http://localhost:8000/api/events", "whose host localhost is a loopback address, not a public one: "),
        ("http://127.0.0.1/", "whose host 127.0.0.1 is a loopback address"),
        ("http://127.1/", "whose host 127.1 is a loopback address"),  # inet_aton's short form
        ("http://2130706433/", "whose host 2130706433 is a loopback address"),  # 127.0.0.1 as one number
        ("http://0x7f.0.0.1/", "whose host 0x7f.0.0.1 is a loopback address"),
        ("http://[::1]/", "whose host ::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "whose host ::ffff:127.0.0.1 is a loopback address"),
        ("http://10.1.2.3/", "whose host 10.1.2.3 is a private address"),
        ("http://172.16.0.9/", "whose host 172.16.0.9 is a private address"),
        ("http://192.168.1.1/", "whose host 192.168.1.1 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "whose host 169.254.169.254 is a link-local address"),
        ("http://0.0.0.0:8000/", "whose host 0.0.0.0 is an unspecified address"),
        ("http://[fd00::1]/", "whose host fd00::1 is a private address"),
        ("http://[fe80::1]/", "whose host fe80::1 is a link-local address"),
        ("https://user:secret@images.example/cat.png", "an address with a user name or password in it: "),
        ("http://127.0.0.1\\@images.example/", "which is not a well-formed address: "),
        ("http:///cat.png", "an address without a host: "),
        ({"detail": "high"}, "has no image address: "),
    ],
)
def test_an_image_elsewhere_is_refused_naming_the_line_message_and_part(jsonl, refusal, image, why) -> None:
    message = refusal(jsonl(asking("https://images.example/ok.png"), asking(image)))
    assert message.startswith("Line 2: the image of part 2 of message 1 of messages "), message
    assert why in message and message.endswith(ALLOWED), message


def test_every_kind_of_image_part_and_every_place_an_example_holds_images_is_checked(jsonl, refusal) -> None:
    hugging_face = refusal(jsonl(asking("file:///etc/shadow", part_type="image")))
    assert hugging_face.startswith("Line 1: the image of part 2 of message 1 of messages is file:///etc/shadow")
    responses = refusal(jsonl(asking("http://10.0.0.1/x.png", part_type="input_image")))
    assert "the image of part 2 of message 1 of messages is http://10.0.0.1/x.png" in responses
    placeholder = {"type": "image", "url": "file:///data/secret.png"}
    pair = {
        "prompt": [{"role": "user", "content": [placeholder, {"type": "text", "text": "Which?"}]}],
        "chosen": "this",
        "rejected": "that",
    }
    assert refusal(jsonl(pair)).startswith(
        "Line 1: the image of part 1 of message 1 of prompt is file:///data/secret.png"
    )
    earlier_turn = {  # an image in a message before the answer of a conversational preference pair
        "prompt": "Describe it.",
        "chosen": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://[::1]/a.png"}}]},
            {"role": "assistant", "content": "A dog."},
        ],
        "rejected": "A cat.",
    }
    assert refusal(jsonl(earlier_turn)).startswith("Line 1: the image of part 1 of message 1 of chosen is http://[::1]")
    top_level = {"prompt": "p", "chosen": "a", "rejected": "b", "images": ["https://images.example/a.png", "/etc/x"]}
    assert refusal(jsonl(top_level)) == f"Line 1: image 2 of images is /etc/x: {ALLOWED}"
    assert refusal(jsonl({**top_level, "images": [{"path": "file:///etc/x"}]})).startswith(
        "Line 1: image 1 of images is file:///etc/x: "
    )
    (with_placeholder,) = parse_examples(jsonl({**pair, "prompt": [{"role": "user", "content": [{"type": "image"}]}],
                                                "images": [PNG]}))
    assert with_placeholder.has_images  # a placeholder part names no image of its own: the example's images do


def test_a_long_address_is_shown_cut_short() -> None:
    problem = image_reference_problem("file:///" + "a" * 500)
    assert problem is not None and "a" * 60 not in problem and "..." in problem
    data_url = image_reference_problem("data:text/plain;base64," + "QUFB" * 100_000)
    assert data_url is not None and len(data_url) < 200
