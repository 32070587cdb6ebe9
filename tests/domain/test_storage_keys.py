"""Readers are told where a run's files are by their key in the storage, whichever folder or bucket holds it."""

from __future__ import annotations

import pytest

from domain.runs.merge import already_merged
from domain.storage_keys import storage_key

RUN = "3f2a9c1e-0b7d-4c55-9a61-2f0e8d4b7c10"


@pytest.mark.parametrize(
    ("location", "key"),
    [
        (f"/srv/verity/data/storage/runs/{RUN}/adapter", f"runs/{RUN}/adapter"),
        (f"/tmp/x/data/storage/runs/{RUN}/merged", f"runs/{RUN}/merged"),
        (f"/tmp/x/data/storage/runs/{RUN}/merged/", f"runs/{RUN}/merged/"),
        (f"/home/runs/verity/data/storage/runs/{RUN}/adapter", f"runs/{RUN}/adapter"),  # a data folder under runs/
        (f"s3://team-bucket/verity/runs/{RUN}/adapter", f"runs/{RUN}/adapter"),
        (f"s3://verity-runs/runs/runs/{RUN}/merged/", f"runs/{RUN}/merged/"),  # a bucket prefix named runs
        (f"s3://team-bucket/runs/{RUN}/rollouts/round-001.jsonl", f"runs/{RUN}/rollouts/round-001.jsonl"),
        (f"/srv/verity/data/storage/datasets/{RUN}/train.jsonl", f"datasets/{RUN}/train.jsonl"),
        (f"runs/{RUN}/adapter", f"runs/{RUN}/adapter"),  # already a key: as it is
        ("/somewhere/else/adapter", "adapter"),  # outside the storage's layout: its name, not the server's path
        ("s3://other-bucket/prefix/model", "model"),
    ],
)
def test_a_location_is_shown_as_its_key_in_the_storage(location: str, key: str) -> None:
    assert storage_key(location) == key


def test_a_merge_asked_for_twice_says_where_the_checkpoint_is_in_the_storage() -> None:
    message = already_merged(f"/srv/verity/data/storage/runs/{RUN}/merged/")
    assert message == f"This run's adapter is already merged: the full checkpoint is in storage at runs/{RUN}/merged/."
