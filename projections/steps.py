"""The steps of SFT and DPO runs (Run.StepLogged), one row each, for the run page's loss chart and table."""

from __future__ import annotations

from projections.base import Event
from projections.run_rows import RunRows
from projections.tables import Row


class Steps(RunRows):
    name = "run_steps"
    event_type = "Run.StepLogged"

    def row(self, e: Event, place: Row) -> Row:
        step = e.data["step"]
        return {
            "step": step["step"],
            "org_id": place["org_id"],
            "steps": step["steps"],
            "epoch": step["epoch"],
            "loss": step["loss"],
            "validation_loss": step.get("validation_loss"),
            "seconds": step["seconds"],
            "logged_at": e.time,
        }
