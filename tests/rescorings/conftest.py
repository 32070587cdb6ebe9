"""Helpers for the re-scoring stories: the evaluation stories' world (an in-memory Verity with an organization and
a project, runs trained to their adapter)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "evaluations"))  # evaluation_helpers
