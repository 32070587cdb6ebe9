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
