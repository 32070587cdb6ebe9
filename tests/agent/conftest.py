"""The agent's stories share one served console per module (agent_console.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the helpers module beside this file

from agent_console import Console, serve_console


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Iterator[Console]:
    yield from serve_console(tmp_path_factory.mktemp("verity") / "data", tiny_model_dir)
