"""An app built without a storage stores an upload where the environment's settings say (as `verity serve` does),
never answering 500."""

from __future__ import annotations

import json

from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization


def test_an_app_given_no_storage_stores_uploads_in_the_configured_storage(sqlite_settings: Settings, monkeypatch):
    configured = sqlite_settings.data_dir.parent / "configured-storage"
    monkeypatch.setenv("VERITY_STORAGE_URL", str(configured))
    verity = build_application(sqlite_settings)
    read_models = build_read_models(sqlite_settings)
    org_id, _ = ensure_default_organization(sqlite_settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    with TestClient(create_app(verity, read_models, runner=runner)) as client:
        sign_in_as(client, verity, read_models, org_id)
        dataset_id = client.post("/api/datasets", json={"name": "no storage given"}).json()["id"]
        chat = {"messages": [{"role": "user", "content": "1 + 1?"}, {"role": "assistant", "content": "2"}]}
        files = {"train": ("train.jsonl", json.dumps(chat).encode() + b"\n", "application/jsonl")}
        answer = client.post(f"/api/datasets/{dataset_id}/versions", files=files)
    assert answer.status_code == 201, answer.text
    assert (configured / "datasets" / answer.json()["id"] / "train.jsonl").is_file()


def test_an_upload_to_storage_out_of_reach_is_refused_in_words_and_records_nothing(sqlite_settings: Settings,
                                                                                   monkeypatch):
    # Real boto3 against a port where nothing listens: S3 out of reach, as when the endpoint is down.
    import socket

    import boto3
    from botocore.config import Config

    from verity.storage import S3Storage

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    client = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{closed_port}", region_name="us-east-1",
                          config=Config(connect_timeout=1, retries={"total_max_attempts": 1}))
    storage = S3Storage("s3://uploads", client=client)
    verity = build_application(sqlite_settings)
    read_models = build_read_models(sqlite_settings)
    org_id, _ = ensure_default_organization(sqlite_settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    chat = {"messages": [{"role": "user", "content": "1 + 1?"}, {"role": "assistant", "content": "2"}]}
    files = {"train": ("train.jsonl", json.dumps(chat).encode() + b"\n", "application/jsonl")}
    with TestClient(create_app(verity, read_models, runner=runner, storage=storage)) as client:
        sign_in_as(client, verity, read_models, org_id)
        dataset_id = client.post("/api/datasets", json={"name": "storage down"}).json()["id"]
        before = verity.recorder.max_notification_id()

        answer = client.post(f"/api/datasets/{dataset_id}/versions", files=files)
        assert answer.status_code == 503, answer.text
        assert answer.json()["detail"].startswith("The upload could not be stored: the storage is full or out of")

        page = client.post(f"/datasets/{dataset_id}/versions", files=files,
                           headers={"x-csrftoken": client.cookies.get("csrftoken", "")})
        assert page.status_code == 503
        assert "Nothing was saved; try again later" in page.text and "Upload" in page.text  # the form, again
        assert verity.recorder.max_notification_id() == before  # no version recorded
