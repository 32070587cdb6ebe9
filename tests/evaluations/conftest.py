"""Helpers for the evaluation and loop stories: an in-memory Verity with an organization and a project."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the helpers module beside this file

from evaluation_helpers import OWNER, World, new_world

__all__ = ["OWNER", "World"]


@pytest.fixture
def world() -> World:
    return new_world()
