"""Processes that start together on one PostgreSQL database (the web processes of `verity serve --workers N`, the
workers of `verity try-production`) each open the event store, and eventsourcing makes its tables, indexes and
functions in each of them. Run at once, its `CREATE OR REPLACE FUNCTION` failed in one process with "tuple
concurrently updated" (a CI run's worker died of it): every process now opens the store in turn."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest

from verity.config import PostgresSettings, Settings
from verity.wiring import build_application

pytestmark = pytest.mark.postgres
PROCESSES = 8


def _open_event_store(settings: Settings, start: Event) -> None:
    start.wait(30)  # every process opens the store at once
    verity = build_application(settings)
    verity.close()


def _open_together(settings: Settings) -> list[int]:
    context = multiprocessing.get_context("fork")  # nothing of the store is open in this process to be inherited
    start = context.Event()
    processes = [context.Process(target=_open_event_store, args=(settings, start)) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(120)
    return [process.exitcode for process in processes]


def test_processes_that_open_a_new_event_store_at_once_all_open_it(
    tmp_path: Path, postgres: PostgresSettings
) -> None:
    settings = Settings(data_dir=tmp_path / "data", postgres=postgres)
    assert _open_together(settings) == [0] * PROCESSES


def test_processes_that_open_an_existing_event_store_at_once_all_open_it(
    tmp_path: Path, postgres: PostgresSettings
) -> None:
    settings = Settings(data_dir=tmp_path / "data", postgres=postgres)
    build_application(settings).close()  # what `verity migrate` does first in the layout
    assert _open_together(settings) == [0] * PROCESSES
