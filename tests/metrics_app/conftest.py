"""A console over a real event store and read models, driven by the Litestar test client."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from consoles import ClientConsole, client_console

from projections.store import TableReadModels
from verity.config import Settings
from verity.storage import FileStorage, open_storage


@dataclass
class Console(ClientConsole):
    read_models: TableReadModels
    storage: FileStorage


@pytest.fixture
def console(sqlite_settings: Settings) -> Iterator[Console]:
    with client_console(sqlite_settings, Console, storage=open_storage(sqlite_settings)) as console:
        yield console
