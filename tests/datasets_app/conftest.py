"""A console over a real event store, read models and file storage, driven by the Litestar test client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from domain.application import Verity
from projections.runner import ProjectionRunner
from projections.store import TableReadModels
from verity.config import Settings
from verity.storage import FileStorage, open_storage
from verity.wiring import build_application, build_read_models, ensure_default_organization


@dataclass
class Console:
    client: TestClient
    verity: Verity
    read_models: TableReadModels
    storage: FileStorage
    org_id: UUID
    project_id: UUID

    def settle(self) -> None:
        assert self.read_models.wait_for(self.log_position(), timeout=10), "the read models did not catch up"

    def log_position(self) -> int:
        return self.verity.recorder.max_notification_id() or 0

    def feed_position(self) -> int:
        """Where the organization's event feed ends, as a client reads it."""
        self.settle()
        return self.client.get("/api/events", params={"after": 0, "limit": 1000}).json()["next_after"]

    def stored_files(self) -> list[str]:
        return self.storage.keys("datasets/")

    def new_dataset(self, name: str = "arithmetic") -> UUID:
        answer = self.client.post("/api/datasets", json={"name": name})
        assert answer.status_code == 201, answer.text
        return UUID(answer.json()["id"])


def _console(settings: Settings) -> Iterator[Console]:
    verity = build_application(settings)
    read_models = build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    storage = open_storage(settings)
    app = create_app(verity, read_models, runner=runner, storage=storage, debug=True)
    with TestClient(app) as client:
        sign_in_as(client, verity, read_models, org_id)  # the owner of Default, with a session and a CSRF header
        yield Console(client, verity, read_models, storage, org_id, project_id)


@pytest.fixture
def console(sqlite_settings: Settings) -> Iterator[Console]:
    yield from _console(sqlite_settings)


@pytest.fixture
def postgres_console(postgres_settings: Settings) -> Iterator[Console]:
    yield from _console(postgres_settings)


def chat(question: str, reference: str) -> dict:
    return {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": reference}]}


def jsonl(*records: object) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


@pytest.fixture
def arithmetic() -> dict[str, bytes]:
    """A small version in 000's chat format: numeric references in every split."""
    return {
        "train": jsonl(*(chat(f"What is {n} + {n}?", str(2 * n)) for n in range(1, 13))),
        "validation": jsonl(chat("What is 7 * 6?", "42"), chat("What is 9 - 4?", "5")),
        "test": jsonl(chat("What is 3 * 3?", "9")),
    }
