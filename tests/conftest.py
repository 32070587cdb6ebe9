"""Fixtures shared by every room's tests: a fresh PostgreSQL database per test, and the GPU skip. This folder
is on sys.path, so that any test module imports the helpers of consoles.py."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from domain.actors import Actor
from verity.config import PostgresSettings, Settings

sys.path.insert(0, str(Path(__file__).parent))  # tests/consoles.py, shared by every room's consoles

POSTGRES_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_MODEL_SEED = 0


def _cuda_available() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any("gpu" in item.keywords for item in items) and not _cuda_available():
        skip_gpu = pytest.mark.skip(reason="needs a CUDA device; none is present here")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip_gpu)


@pytest.fixture
def postgres() -> Iterator[PostgresSettings]:
    """A new, empty PostgreSQL database on 127.0.0.1:5432, dropped after the test."""
    name = f"verity_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PostgresSettings(host="127.0.0.1", port=5432, dbname=name, user="postgres", password="")
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_settings(tmp_path) -> Settings:
    """The embedded default in a fresh data folder."""
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def postgres_settings(tmp_path, postgres: PostgresSettings) -> Settings:
    """The production event store and read models on a fresh PostgreSQL database; files in a fresh folder."""
    return Settings(data_dir=tmp_path / "data", postgres=postgres)


@pytest.fixture
def owner() -> Actor:
    """The person the stories of the domain and the read models act as, an owner."""
    return Actor("person", "owner@localhost", "owner@localhost")


def ensure_tiny_model() -> Path:
    """The tiny model of seed 0, built once per recipe version and kept under .tiny-model/ (git-ignored)."""
    from trainer.tiny_model import TINY_MODEL_VERSION, build_tiny_model

    target = REPO_ROOT / ".tiny-model" / f"v{TINY_MODEL_VERSION}-seed{TINY_MODEL_SEED}"
    if not (target / "tiny_model.json").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(dir=target.parent, prefix=".building-"))
        build_tiny_model(building, seed=TINY_MODEL_SEED)
        try:
            os.rename(building, target)  # atomic: a half-built model is never taken for a built one
        except OSError:
            shutil.rmtree(building, ignore_errors=True)  # another session built it first
    return target


def pytest_collection_finish(session: pytest.Session) -> None:
    """Builds the tiny model before the first test, where one collected needs it: a build inside the first such
    test counted against that test's timeout (600 s), which a loaded 2-core machine can pass (it took 23 minutes
    beside other work), and every test after it erred on the failed fixture."""
    if session.config.option.collectonly:
        return
    if any("tiny_model_dir" in getattr(item, "fixturenames", ()) for item in session.items):
        ensure_tiny_model()


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    """The tiny model of seed 0 (built before the first test that needs it: `pytest_collection_finish`)."""
    return ensure_tiny_model()
