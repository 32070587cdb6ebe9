"""The Runs list follows its live runs by itself, as the run page's parts do.

While a run on it is Queued, Preparing, Training or Saving adapter (or a full run is Adapter ready on its way to
Completed), the table re-asks for itself every 2 s with the stamp of what it shows; a poll that finds nothing
changed answers 204, so htmx swaps nothing. Once no run is live the table carries no trigger: polling stops.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from projections.rows import RunRow
from projections.run_reads import LIVE_STATES
from projections.store import ReadModels


def list_stamp(runs: Sequence[RunRow]) -> str:
    """Changes whenever anything a row shows changes."""
    seen = [(r.id, r.state, r.status_line, r.rounds_done, r.steps_logged, r.best_round, r.best_validation,
             r.updated_at) for r in runs]
    return hashlib.blake2s(repr(seen).encode(), digest_size=6).hexdigest()


def any_live(read_models: ReadModels, org_id: UUID, runs: Sequence[RunRow]) -> bool:
    if any(run.state in LIVE_STATES for run in runs):
        return True
    # Adapter ready is live only for a full run that did all its rounds and is about to say Completed.
    return any(
        detail.live
        for run in runs
        if run.state == "adapter_ready" and run.kind == "full"
        and (detail := read_models.run(org_id, run.id)) is not None
    )


def runs_list_context(read_models: ReadModels, org_id: UUID) -> dict[str, Any]:
    runs = read_models.runs(org_id)
    return {"runs": runs, "live": any_live(read_models, org_id, runs), "stamp": list_stamp(runs)}
