"""A console over a real event store, read models and file storage, driven by the Litestar test client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from uuid import UUID

import pytest
from consoles import ClientConsole, client_console

from projections.store import TableReadModels
from verity.config import Settings
from verity.storage import FileStorage, open_storage


@dataclass
class Console(ClientConsole):
    read_models: TableReadModels
    storage: FileStorage

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
    with client_console(settings, Console, storage=open_storage(settings)) as console:
        yield console


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
