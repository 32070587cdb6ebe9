"""A person uploads versions of a dataset: good ones list and browse; a bad file anywhere stores nothing at all."""

from __future__ import annotations

import html
import json
import re

import pytest


def chat(question: str, reference: str) -> dict:
    return {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": reference}]}


def jsonl(*records: object) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


GOOD_TRAIN = jsonl(chat("What is 1 + 1?", "2"), chat("What is 2 + 2?", "4"))


def _files(**splits: bytes) -> dict:
    return {split: (f"{split}.jsonl", data, "application/jsonl") for split, data in splits.items()}


def test_a_good_upload_lists_and_browses(console, arithmetic):
    created = console.client.post("/datasets", data={"name": "arithmetic"}, follow_redirects=False)
    assert created.status_code == 303
    dataset_page = console.client.get(created.headers["location"])
    assert "No version yet" in dataset_page.text

    dataset_id = created.headers["location"].rsplit("/", 1)[-1]
    uploaded = console.client.post(
        f"/datasets/{dataset_id}/versions", files=_files(**arithmetic), follow_redirects=False
    )
    assert uploaded.status_code == 303, uploaded.text
    version_id = uploaded.headers["location"].rsplit("/", 1)[-1]
    assert console.stored_files() == [
        f"datasets/{version_id}/test.jsonl",
        f"datasets/{version_id}/train.jsonl",
        f"datasets/{version_id}/validation.jsonl",
    ]

    browse = console.client.get(uploaded.headers["location"])
    assert browse.status_code == 200
    assert "arithmetic v1" in browse.text
    assert "the first 5 of 12" in browse.text  # training examples shown
    assert "What is 7 * 6?" in browse.text and "<td>42</td>" in browse.text

    listed = console.client.get("/datasets").text
    assert "arithmetic" in listed and "12 training, 2 validation, 1 test" in listed

    version = console.client.get(f"/api/dataset-versions/{version_id}").json()
    assert version["label"] == "arithmetic v1"
    assert version["split_counts"] == {"train": 12, "validation": 2, "test": 1}
    assert version["shape"] == "messages" and version["has_images"] is False
    assert len(version["examples"]["train"]) == 5
    assert version["examples"]["validation"][0] == {
        "prompt": [{"role": "user", "content": "What is 7 * 6?"}],
        "reference": "42",
    }
    [dataset] = console.client.get("/api/datasets").json()
    assert [v["label"] for v in dataset["versions"]] == ["arithmetic v1"]

    second = console.client.post(f"/api/datasets/{dataset_id}/versions", files=_files(train=GOOD_TRAIN))
    assert second.status_code == 201 and second.json()["label"] == "arithmetic v2"
    assert [v["number"] for v in console.client.get(f"/api/datasets/{dataset_id}").json()["versions"]] == [2, 1]


def test_the_stored_rows_are_prompt_and_reference_as_the_trainer_reads_them_and_pairs_keep_rejected(console):
    dataset_id = console.new_dataset()
    pair = {"prompt": "Say hi", "chosen": "hi", "rejected": "go away"}
    answer = console.client.post(f"/api/datasets/{dataset_id}/versions", files=_files(train=jsonl(pair)))
    assert answer.status_code == 201
    [line] = list(console.storage.read_lines(f"datasets/{answer.json()['id']}/train.jsonl"))
    # RL reads prompt and reference; DPO also reads the rejected answer of a preference pair.
    expected = {"prompt": [{"role": "user", "content": "Say hi"}], "reference": "hi", "rejected": "go away"}
    assert json.loads(line) == expected


BAD_UPLOADS = {
    "not JSON": (
        {"train": GOOD_TRAIN, "validation": GOOD_TRAIN + b'{"messages": [}\n'},
        "validation",
        "validation.jsonl (validation examples): Line 3: not JSON (Expecting value at column 15).",
    ),
    "empty file": (
        {"train": GOOD_TRAIN, "test": b"\n\n"},
        "test",
        "test.jsonl (test examples): The file is empty: upload one JSON example a line.",
    ),
    "not UTF-8": (
        {"train": b'{"question": "caf\xe9", "answer": "1"}\n'},
        "train",
        "train.jsonl (training examples): Line 1 is not UTF-8 text (byte 18). Save the file as UTF-8.",
    ),
    "a line over 1 MiB": (
        {"train": GOOD_TRAIN + b'{"question": "' + b"x" * (1024 * 1024) + b'", "answer": "1"}\n'},
        "train",
        "train.jsonl (training examples): Line 3 is over 1 MiB: each example must fit in 1 MiB a line.",
    ),
    "no reference": (
        {"train": jsonl({"messages": [{"role": "user", "content": "hi"}]})},
        "train",
        "train.jsonl (training examples): Line 1: the last message must be the assistant's reply, the reference; "
        "this one is from the user.",
    ),
    "two formats in a file": (
        {"train": GOOD_TRAIN + jsonl({"question": "q", "answer": "1"})},
        "train",
        "train.jsonl (training examples): Line 3: it is a question with an answer, but line 1 is a chat example. "
        "Use one format in a file.",
    ),
    "two formats in a version": (
        {"train": GOOD_TRAIN, "validation": jsonl({"question": "q", "answer": "1"})},
        "validation",
        "validation.jsonl (validation examples): its examples are a question with an answer, but the training "
        "examples are a chat example. Use one format in a version.",
    ),
    "an image on the server's disk": (
        {"train": GOOD_TRAIN + jsonl({"messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]},
            {"role": "assistant", "content": "root"},
        ]})},
        "train",
        "train.jsonl (training examples): Line 3: the image of part 1 of message 1 of messages is "
        "file:///etc/passwd: an image is an https:// or http:// address of a public host, or a data:image/...;base64 "
        "URL.",
    ),
    "an image only the server reaches": (
        {"train": GOOD_TRAIN, "validation": jsonl({"messages": [
            {"role": "user", "content": [{"type": "image", "url": "http://169.254.169.254/latest/meta-data/"}]},
            {"role": "assistant", "content": "keys"},
        ]})},
        "validation",
        "validation.jsonl (validation examples): Line 1: the image of part 1 of message 1 of messages is "
        "http://169.254.169.254/latest/meta-data/, whose host 169.254.169.254 is a link-local address, not a public "
        "one: an image is an https:// or http:// address of a public host, or a data:image/...;base64 URL.",
    ),
    "no file": (
        {},
        "",
        "Choose at least one file: training, validation or test examples, one JSON example a line.",
    ),
}


@pytest.mark.parametrize("case", BAD_UPLOADS, ids=list(BAD_UPLOADS))
def test_a_bad_upload_through_the_page_or_the_api_stores_nothing(console, case):
    splits, field, message = BAD_UPLOADS[case]
    dataset_id = console.new_dataset()
    feed, log = console.feed_position(), console.log_position()

    page = console.client.post(f"/datasets/{dataset_id}/versions", files=_files(**splits) or {"train": ("", b"")})
    assert page.status_code == 422
    assert message in html.unescape(page.text)

    api = console.client.post(f"/api/datasets/{dataset_id}/versions", files=_files(**splits) or {"train": ("", b"")})
    assert api.status_code == 422
    assert api.json()["errors"] == {field: message}

    assert console.log_position() == log
    assert console.feed_position() == feed
    assert console.stored_files() == []
    assert console.client.get(f"/api/datasets/{dataset_id}").json()["versions"] == []


def test_a_new_dataset_needs_a_name_of_its_own(console):
    console.new_dataset("arithmetic")
    again = console.client.post("/api/datasets", json={"name": " arithmetic "})
    assert again.status_code == 422
    assert again.json()["errors"] == {"name": "A dataset named arithmetic already exists."}
    page = console.client.post("/datasets", data={"name": ""})
    assert page.status_code == 422 and "Name the dataset." in page.text


def test_a_browser_uploads_with_the_forms_own_csrf_token(console):
    """No script sets a header in a browser: the multipart form carries the token itself."""
    dataset_id = console.new_dataset()
    form = console.client.get(f"/datasets/{dataset_id}/upload").text
    token = re.search(r'name="_csrf_token" value="([^"]+)"', form).group(1)
    header = console.client.headers.pop("x-csrftoken")
    try:
        answer = console.client.post(
            f"/datasets/{dataset_id}/versions",
            data={"_csrf_token": token},
            files=_files(train=GOOD_TRAIN),
            follow_redirects=False,
        )
    finally:
        console.client.headers["x-csrftoken"] = header
    assert answer.status_code == 303, answer.text
    assert "Datasets" in console.client.get(answer.headers["location"]).text  # the nav leads back
