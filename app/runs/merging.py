"""Merge model, as the run page shows it: whether a merged checkpoint is in storage, or was just asked for.

The merge itself is a job (jobs/merge.py) that writes `runs/<run id>/merged/` and, last, `merge.json`; the web
process only looks for that file, so it never loads a model.
"""

from __future__ import annotations

import json
from typing import Any

from projections.rows import RunDetail


def merged_prefix(run_id: object) -> str:
    return f"runs/{run_id}/merged/"


def merge_state(run: RunDetail, storage: Any, asked: str | None) -> dict[str, Any] | None:
    """{"done": bool, "location": str, ...} once merged; {"done": False} right after Merge model; else None."""
    if run.adapter is None or storage is None:
        return None
    marker = merged_prefix(run.id) + "merge.json"
    try:
        if storage.exists(marker):
            return {"done": True, **json.loads(b"".join(storage.read_lines(marker)))}
    except (OSError, ValueError):
        return None
    return {"done": False} if asked == "sent" else None
