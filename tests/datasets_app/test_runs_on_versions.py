"""Saving a run that names a dataset version: the version must suit RL, and every reference the reward."""

from __future__ import annotations

import json

import pytest

NUMERIC = {"preset": "numeric", "metric": "numeric_accuracy"}
IMAGE_PART = {"type": "image_url", "image_url": {"url": "https://images.example/x.png"}}
WITH_AN_IMAGE = {"messages": [{"role": "user", "content": [IMAGE_PART]}, {"role": "assistant", "content": "1"}]}


def chat(question: str, reference: str) -> dict:
    return {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": reference}]}


def jsonl(*records: object) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def upload(console, **splits: bytes) -> str:
    dataset_id = console.new_dataset(f"set {len(console.client.get('/api/datasets').json())}")
    files = {split: (f"{split}.jsonl", data, "application/jsonl") for split, data in splits.items()}
    answer = console.client.post(f"/api/datasets/{dataset_id}/versions", files=files)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def run_body(version_id: str, reward: dict = NUMERIC) -> dict:
    return {"name": "speeds", "dataset_version": version_id, "training": {"rl": {"reward": reward}}}


def test_a_version_whose_references_suit_the_reward_saves(console, arithmetic):
    version_id = upload(console, **arithmetic)
    saved = console.client.post("/api/runs", json=run_body(version_id))
    assert saved.status_code == 201, saved.text
    assert saved.json()["run"]["settings"]["dataset_version"] == version_id


def test_a_bad_reference_is_refused_with_the_exact_message_and_nothing_is_saved(console):
    train = jsonl(chat("A train travels 120 km in 1.5 hours. Speed in km/h?", "80"), chat("And back?", "about 80"))
    validation = jsonl(chat("What is 7 * 6?", "42"), chat("What is 9 - 4?", "five"))
    version_id = upload(console, train=train, validation=validation, test=jsonl(chat("q", "not a number")))
    log = console.log_position()

    refused = console.client.post("/api/runs", json=run_body(version_id))
    assert refused.status_code == 422
    assert refused.json()["errors"] == {
        "dataset_version": "Incompatible reference answers: training example 2: 'about 80' is not a plain number; "
        "validation example 2: 'five' is not a plain number."  # test examples are never read by RL
    }
    assert console.log_position() == log

    form = {"name": "speeds", "kind": "full", "project": str(console.project_id), "dataset_version": version_id,
            "reward_preset": "numeric", "reward_metric": "numeric_accuracy"}  # fmt: skip
    page = console.client.post("/runs", data=form)
    assert page.status_code == 422
    assert "Incompatible reference answers: training example 2: &#39;about 80&#39; is not a plain number" in page.text


def test_at_most_twenty_bad_references_are_named(console):
    version_id = upload(
        console,
        train=jsonl(*(chat(f"question {n}", f"answer {n}") for n in range(1, 31))),
        validation=jsonl(chat("q", "1")),
    )
    message = console.client.post("/api/runs", json=run_body(version_id)).json()["errors"]["dataset_version"]
    assert message.startswith("Incompatible reference answers: training example 1: 'answer 1' is not a plain number")
    assert message.count("is not a plain number") == 20 and message.endswith("'answer 20' is not a plain number.")


@pytest.mark.parametrize(
    ("splits", "message"),
    [
        (
            {"train": jsonl(WITH_AN_IMAGE)},
            "RL trains on text, and this version has images. Choose a version in text only, or SFT or DPO.",
        ),
        (
            {"train": jsonl(chat("q", "1")), "test": jsonl(chat("q", "1"))},
            "RL needs training and validation examples; set 0 v1 has no validation examples.",
        ),
    ],
    ids=["images", "no validation examples"],
)
def test_a_version_rl_cannot_use_is_refused(console, splits, message):
    version_id = upload(console, **splits)
    refused = console.client.post("/api/runs", json=run_body(version_id))
    assert refused.status_code == 422
    assert refused.json()["errors"] == {"dataset_version": message}


def test_a_version_of_no_organization_is_refused(console):
    refused = console.client.post("/api/runs", json=run_body("7b1e2f9c-0000-4000-8000-000000000000"))
    assert refused.json()["errors"] == {"dataset_version": "Choose a dataset version of this organization."}


@pytest.mark.postgres
def test_on_postgresql_an_upload_browses_and_a_bad_reference_is_refused(postgres_console):
    console = postgres_console
    version_id = upload(console, train=jsonl(chat("q", "80"), chat("q", "eighty")), validation=jsonl(chat("q", "1")))
    version = console.client.get(f"/api/dataset-versions/{version_id}").json()
    assert version["split_counts"] == {"train": 2, "validation": 1, "test": 0}
    assert version["examples"]["train"][1]["reference"] == "eighty"
    refused = console.client.post("/api/runs", json=run_body(version_id))
    assert refused.json()["errors"]["dataset_version"] == (
        "Incompatible reference answers: training example 2: 'eighty' is not a plain number."
    )
    bad = console.client.post(
        f"/api/datasets/{version['dataset_id']}/versions", files={"train": ("train.jsonl", b"nope\n", "text/plain")}
    )
    assert bad.status_code == 422 and console.stored_files() == [
        f"datasets/{version_id}/train.jsonl",
        f"datasets/{version_id}/validation.jsonl",
    ]


def test_the_configure_form_offers_the_versions_rl_can_use(console, arithmetic):
    usable = upload(console, **arithmetic)
    without_validation = upload(console, train=jsonl(chat("q", "1")))
    form = console.client.get("/runs/new").text
    assert f'<option value="{usable}"' in form and "set 0 v1 · 12 training, 2 validation" in form
    assert without_validation not in form
