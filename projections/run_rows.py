"""What the rounds, the rollout files and the steps share: one row per event of a run, filed under the run's
organization, with nothing written for a run the directory never filed."""

from __future__ import annotations

from projections.base import Event, Projection
from projections.directory import directory_entry
from projections.tables import Row, Tx


class RunRows(Projection):
    """Writes `row`'s row of each `event_type` event to `table` (the projection's name unless told), keyed by the
    run's id and the row's own number."""

    event_type: str
    table = ""

    def __init__(self) -> None:
        self.handlers = {self.event_type: self._write}

    def _write(self, tx: Tx, e: Event) -> None:
        place = directory_entry(tx, e)
        row = self.row(e, place) if place is not None else None
        if row is not None:
            row["run_id"] = e.aggregate_key
            tx.write(self.table or self.name, row)  # nothing of the page reads a run's rows back

    def row(self, e: Event, place: Row) -> Row | None:
        """The row's columns but `run_id`, a new dict (None: no row); `place` is the run's directory entry."""
        raise NotImplementedError
