"""A parsed upload becomes a DatasetVersion of an organization: counts per split, its shape, whether it has
images, and where its examples are stored."""

from __future__ import annotations

import uuid

import pytest
from eventsourcing.application import Application

from domain.datasets.tally import UploadTally
from domain.datasets.upload import RL_REFUSES_IMAGES, parse_examples
from domain.datasets.version import DatasetVersion, DatasetVersionInvalid
from domain.errors import IllegalTransition

OWNER = {"kind": "person", "id": "owner@localhost", "name": "owner@localhost"}
ORG = uuid.uuid4()


def upload(**changes) -> DatasetVersion:
    settings = {
        "org_id": ORG,
        "dataset_name": " speeds ",
        "number": 1,
        "storage_key": "datasets/speeds/v1.jsonl",
        "split_counts": {"train": 90, "validation": 10},
        "shape": "messages",
        "has_images": False,
        "actor": OWNER,
    }
    return DatasetVersion.upload(**{**settings, **changes})


def test_an_upload_is_tallied_while_it_streams_and_recorded_as_a_version(jsonl):
    tally = UploadTally()
    lines = jsonl(*[{"question": f"{n}+1?", "answer": str(n + 1)} for n in range(5)])
    rows = [example.to_row() for example in tally.count(parse_examples(lines))]
    assert len(rows) == 5 and (tally.examples, tally.shape, tally.has_images) == (5, "question_answer", False)
    version = upload(
        split_counts={"train": 4, "validation": 1}, shape=tally.shape, has_images=tally.has_images
    )
    assert version.split_counts == {"train": 4, "validation": 1, "test": 0}
    assert (version.label, version.total_examples, version.rl_problem()) == ("speeds v1", 5, None)


def test_a_version_is_saved_and_read_back_from_its_events():
    app = Application()
    version = upload()
    version.archive(OWNER)
    app.save(version)
    again = app.repository.get(version.id)
    assert (again.org_id, again.storage_key, again.split_counts, again.archived) == (
        ORG,
        "datasets/speeds/v1.jsonl",
        {"train": 90, "validation": 10, "test": 0},
        True,
    )


def test_rl_refuses_a_version_with_images_or_without_training_and_validation_examples():
    assert upload(has_images=True).rl_problem() == RL_REFUSES_IMAGES
    assert upload(split_counts={"test": 100}).rl_problem() == (
        "RL needs training and validation examples; speeds v1 has no training and no validation examples."
    )
    archived = upload()
    archived.archive(OWNER)
    assert archived.rl_problem() == "speeds v1 is archived: choose an active version."
    with pytest.raises(IllegalTransition):
        archived.archive(OWNER)


def test_preference_pairs_are_counted_and_images_noticed(jsonl):
    tally = UploadTally()
    pairs = jsonl(
        {"prompt": "p", "chosen": "a", "rejected": "b"},
        {
            "prompt": [{"role": "user", "content": [{"type": "image", "image": "https://images.example/x.png"}]}],
            "chosen": "a",
            "rejected": "b",
        },
    )
    list(tally.count(parse_examples(pairs)))
    assert (tally.examples, tally.preference_pairs, tally.has_images) == (2, 2, True)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dataset_name": " "}, "Name the dataset."),
        ({"number": 0}, "A version number starts at 1."),
        ({"storage_key": ""}, "A version needs the storage key of its examples."),
        ({"split_counts": {"training": 3}}, "Unknown split 'training': use train, validation and test."),
        ({"split_counts": {"train": -1, "test": 3}}, "A split can't have a negative number of examples."),
        ({"split_counts": {"train": 0}}, "The version has no examples."),
        ({"shape": "csv"}, "Unknown example format 'csv'."),
    ],
)
def test_a_version_that_cannot_be_recorded_is_refused(changes, message):
    with pytest.raises(DatasetVersionInvalid) as caught:
        upload(**changes)
    assert caught.value.message == message
