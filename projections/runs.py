"""The Runs list (`runs`): each run's state, status line, progress and best round, and what both run views share.

Run detail (projections/run_details.py) builds on `RunStates` too: both views move through the same states.
"""

from __future__ import annotations

from typing import Any

from domain.runs.run import status_line
from domain.runs.states import TRAINING
from projections.base import Event, Handler, Projection
from projections.run_settings import run_reward_label
from projections.tables import Tx


class RunStates(Projection):
    """The part of a run that both Runs and Run detail show: its state, status line and best round. Each view's
    table is named after it, and each writes its own row when a run is saved or edited."""

    def _state(self, tx: Tx, e: Event, state: str, **changes: Any) -> None:
        self._change(tx, e, state, changes)

    def _change(self, tx: Tx, e: Event, state: str, changes: dict[str, Any]) -> None:
        """The run's row in `state`, with `changes` (the caller's own dict: it goes to `update` as it is), in one
        read of the row and one write: most of a run's events are its rounds."""
        key = {"id": e.aggregate_key}
        row = tx.peek(self.name, key)  # read only: the changes go through `update`
        if row is None:
            return
        changes["state"] = state
        scored = changes.get("rounds_scored", row["rounds_scored"])
        changes["status_line"] = status_line(state, scored, changes.get("rounds_total", row["rounds_total"]))
        changes["updated_at"] = e.time
        tx.update(self.name, key, changes)

    def _saved(self, tx: Tx, e: Event) -> None:
        raise NotImplementedError

    def _edited(self, tx: Tx, e: Event) -> None:
        raise NotImplementedError

    def _shared_handlers(self) -> dict[str, Handler]:
        def to(state: str) -> Handler:
            return lambda tx, e: self._state(tx, e, state)

        return {
            "Run.Saved": self._saved,
            "Run.Edited": self._edited,
            "Run.Launched": to("queued"),
            "Run.Queued": to("queued"),
            "Run.Resumed": to("queued"),  # back on its queue, to go on from its last round's checkpoint
            "Run.Preparing": to("preparing"),
            "Run.SavingAdapter": to("saving_adapter"),
            "Run.Cancelled": to("cancelled"),
            "Run.Deleted": to("deleted"),  # the Runs list leaves it out; its page and timeline stay
            "Run.Completed": to("completed"),
            "Run.RoundScored": self._round_scored,
            "Run.StepLogged": self._step_logged,
        }

    def _step_logged(self, tx: Tx, e: Event) -> None:
        """An SFT or DPO step: the run trains, "Training · step N / M" (the domain's status line)."""
        row = tx.get(self.name, {"id": e.aggregate_key})
        if row is None:
            return
        step = e.data["step"]
        values: dict[str, Any] = {
            "state": "training",
            "status_line": f"Training · step {step['step']} / {step['steps']}",
            "updated_at": e.time,
        }
        if "steps_logged" in row:  # the Runs list counts steps; Run detail reads them from run_steps
            values |= {"steps_logged": step["step"], "steps_total": step["steps"]}
        tx.update(self.name, {"id": row["id"]}, values)

    def _round_scored(self, tx: Tx, e: Event) -> None:
        result = e.data["result"]
        number, best = result["round_number"], e.data["best_round"]
        values: dict[str, Any] = {"rounds_scored": number + 1, "best_round": best}
        if best == number:
            values["best_validation"] = result["validation_reward"]
        self._change(tx, e, TRAINING, values)


class Runs(RunStates):
    name = "runs"

    def __init__(self) -> None:
        self.handlers = {
            **self._shared_handlers(),
            "Run.Stopped": lambda tx, e: self._state(tx, e, "saving_adapter"),
            "Run.Failed": lambda tx, e: self._state(tx, e, "failed"),
            "Run.AdapterReady": lambda tx, e: self._state(tx, e, "adapter_ready"),
            "Run.Continued": lambda tx, e: self._state(
                tx, e, "queued", rounds_total=e.data["settings"].effective_rounds
            ),
        }

    def _saved(self, tx: Tx, e: Event) -> None:
        settings = e.data["settings"]
        total = settings.effective_rounds
        tx.upsert(
            "runs",
            {
                "id": e.aggregate_key,
                "org_id": str(e.data["org_id"]),
                "project_id": str(e.data["project_id"]),
                "name": settings.name,
                "kind": settings.kind,
                "state": "draft",
                "status_line": status_line("draft", 0, total),
                "rounds_total": total,
                "rounds_scored": 0,
                "best_round": None,
                "best_validation": None,
                "reward_label": run_reward_label(tx, settings),
                "objective": settings.objective,
                "steps_logged": 0,
                "steps_total": None,
                "created_at": e.time,
                "updated_at": e.time,
                "created_position": e.position,
            },
        )

    def _edited(self, tx: Tx, e: Event) -> None:
        settings = e.data["settings"]
        total = settings.effective_rounds
        tx.update(
            "runs",
            {"id": e.aggregate_key},
            {
                "name": settings.name,
                "kind": settings.kind,
                "rounds_total": total,
                "status_line": status_line("draft", 0, total),
                "reward_label": run_reward_label(tx, settings),
                "objective": settings.objective,
                "updated_at": e.time,
            },
        )
