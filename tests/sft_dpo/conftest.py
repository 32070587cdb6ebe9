"""The tiny model for the SFT and DPO stories: the trainer room's cached build (tests/trainer/conftest.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    from trainer.tiny_model import TINY_MODEL_VERSION, build_tiny_model

    target = REPO_ROOT / ".tiny-model" / f"v{TINY_MODEL_VERSION}-seed0"
    if not (target / "tiny_model.json").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(dir=target.parent, prefix=".building-"))
        build_tiny_model(building, seed=0)
        try:
            os.rename(building, target)
        except OSError:
            shutil.rmtree(building, ignore_errors=True)
    return target
