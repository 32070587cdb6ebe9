"""An owner connected the organization's own S3 bucket: its runs write their rollouts and adapter there, the bucket's
secret reaches the trainer only through its environment (never the spec file on disk), and the reconciler finds a
saved adapter in that bucket with the same credentials; Merge model writes the merged checkpoint there too."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
import pytest

from domain.actors import Actor
from jobs.kept_adapter import find_kept_adapter
from jobs.run_storage import run_storage
from verity.secrets import SecretBox, secret_key

if TYPE_CHECKING:
    from conftest import Site

pytestmark = pytest.mark.slow

OWNER = Actor("person", "owner@localhost", "owner@localhost")
KEY_ID, SECRET = "AKIAORGANIZATIONKEY", "org-secret-never-on-disk-0123456789"


class SeenChildren(list):
    """Each trainer the worker starts, with its spec file and environment as they were when it started."""

    def __init__(self) -> None:
        super().__init__()
        self.specs: list[str] = []
        self.environments: list[dict[str, str]] = []

    def append(self, child: subprocess.Popen) -> None:
        self.specs.append(Path(child.args[-1]).read_text())
        raw = Path(f"/proc/{child.pid}/environ").read_bytes().split(b"\0")
        self.environments.append(dict(item.decode().split("=", 1) for item in raw if b"=" in item))
        super().append(child)


@pytest.fixture
def trainer_children() -> SeenChildren:
    return SeenChildren()


def test_a_run_writes_to_the_bucket_its_owner_connected(
    embedded: Site, s3_server: str, trainer_children: SeenChildren
) -> None:
    boto3.client("s3", endpoint_url=s3_server).create_bucket(Bucket="team-bucket")
    org_id = embedded.read_models.organizations()[0].id
    sealed = SecretBox(secret_key(embedded.settings)).seal(SECRET)
    chosen = {"kind": "s3", "bucket": "team-bucket", "prefix": "verity/", "endpoint_url": s3_server,
              "region": "eu-west-1", "key_id": KEY_ID}
    embedded.app_verity.set_storage(org_id, chosen, sealed, OWNER, "owner")

    run_id = embedded.save(rounds=1)
    embedded.launch(run_id)
    run = embedded.wait_ended(run_id)

    assert run["state"] == "completed", run.get("failure")
    assert run["adapter"]["location"] == f"runs/{run_id}/adapter"  # its key in the bucket, under the prefix
    listing = boto3.client("s3", endpoint_url=s3_server).list_objects_v2(Bucket="team-bucket", Prefix="verity/runs/")
    keys = {item["Key"] for item in listing["Contents"]}
    assert f"verity/runs/{run_id}/rollouts/round-001.jsonl" in keys
    assert f"verity/runs/{run_id}/adapter/adapter_model.safetensors" in keys
    assert not (embedded.settings.local_storage_dir / "runs" / str(run_id)).exists()  # not the server's default

    # the credentials went to the trainer through its environment, and the spec file names only the place
    (spec,), (environment,) = trainer_children.specs, trainer_children.environments
    assert (environment["AWS_ACCESS_KEY_ID"], environment["AWS_SECRET_ACCESS_KEY"]) == (KEY_ID, SECRET)
    assert environment["AWS_DEFAULT_REGION"] == "eu-west-1"
    assert SECRET not in spec and KEY_ID not in spec and sealed not in spec
    assert '"s3://team-bucket/verity"' in spec

    # the reconciler looks for a dead worker's adapter in the same bucket, with the same credentials
    kept = find_kept_adapter(run_storage(embedded.settings, embedded.app_verity, org_id), str(run_id))
    assert kept is not None and kept.sha256 == run["adapter"]["sha256"]

    # Merge model writes the full checkpoint beside the adapter, in the organization's bucket, not the server's
    assert embedded.client.post(f"/api/runs/{run_id}/merge").status_code == 202
    merge = embedded.wait(run_id, lambda run: run["merge"]["state"] != "merging", timeout=90)["merge"]
    assert merge["state"] == "merged", merge
    assert merge["location"] == f"runs/{run_id}/merged/"
    listing = boto3.client("s3", endpoint_url=s3_server).list_objects_v2(
        Bucket="team-bucket", Prefix=f"verity/runs/{run_id}/merged/"
    )
    merged_keys = {item["Key"].rsplit("/", 1)[-1] for item in listing["Contents"]}
    assert {"model.safetensors", "config.json", "merge.json"} <= merged_keys
    assert not (embedded.settings.local_storage_dir / "runs" / str(run_id)).exists()
