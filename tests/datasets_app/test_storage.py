"""The storage an upload streams into: a local folder, or an S3 bucket (moto stands in for S3 here)."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from verity.storage import LocalStorage, S3Storage, read_rows


@pytest.fixture(params=["local", "s3"])
def storage(request, tmp_path, monkeypatch):
    if request.param == "local":
        yield LocalStorage(tmp_path / "storage")
        return
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket="verity")
        yield S3Storage("s3://verity/team-a")


def test_a_staged_file_appears_whole_on_commit_and_never_on_discard(storage):
    kept = storage.stage("datasets/v1/train.jsonl")
    kept.write(b'{"prompt": [{"role": "user", "content": "q"}], "reference": "1"}\n')
    kept.write(b'{"prompt": [{"role": "user", "content": "r"}], "reference": "2"}\n')
    dropped = storage.stage("datasets/v1/validation.jsonl")
    dropped.write(b"half a file")
    dropped.discard()
    assert not storage.exists("datasets/v1/train.jsonl")  # not there until committed
    assert not any("validation" in key for key in storage.keys("datasets/"))  # nothing left of the discarded
    kept.commit()

    assert storage.keys("datasets/") == ["datasets/v1/train.jsonl"]
    assert [row["reference"] for row in read_rows(storage, "datasets/v1", "train")] == ["1", "2"]
    assert list(read_rows(storage, "datasets/v1", "validation")) == []  # an absent split has no rows
    storage.delete("datasets/v1/train.jsonl")
    assert storage.keys("datasets/") == []


def test_a_key_cannot_leave_the_local_folder(tmp_path):
    with pytest.raises(ValueError, match="leaves the storage folder"):
        LocalStorage(tmp_path).stage("../elsewhere.jsonl")
