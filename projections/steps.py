"""The steps of SFT and DPO runs (Run.StepLogged), one row each, for the run page's loss chart and table."""

from __future__ import annotations

from projections.base import Event, Projection
from projections.directory import directory_entry
from projections.tables import Tx


class Steps(Projection):
    name = "run_steps"

    def __init__(self) -> None:
        self.handlers = {"Run.StepLogged": self._logged}

    def _logged(self, tx: Tx, e: Event) -> None:
        place = directory_entry(tx, e)
        if place is None:
            return
        step = e.data["step"]
        tx.upsert(
            "run_steps",
            {
                "run_id": str(e.aggregate_id),
                "step": step["step"],
                "org_id": place["org_id"],
                "steps": step["steps"],
                "epoch": step["epoch"],
                "loss": step["loss"],
                "validation_loss": step.get("validation_loss"),
                "seconds": step["seconds"],
                "logged_at": e.time,
            },
        )
