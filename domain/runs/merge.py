"""Merge model: a finished run's adapter merged into its base model by a job, as events on the run; its words,
and the checks the Run makes before each of those events (`RunMerges`, a mixin of the Run aggregate).

A merge is asked for (MergeRequested), then the job records that the full checkpoint is written (ModelMerged)
or why it is not (MergeFailed). A failed merge may be asked for again; one under way or done may not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.errors import IllegalTransition
from domain.runs.states import FINISHED_WITH_ADAPTER
from domain.storage_keys import storage_key

MERGING, MERGED, MERGE_FAILED = "merging", "merged", "failed"

NOT_READY = "Only a run whose adapter is ready can be merged into a model."
UNDER_WAY = "This run's adapter is already being merged: the merged model appears under Actions when it is written."
NOT_ASKED = "No merge of this run is under way, so none can end now."


def already_merged(location: str) -> str:
    return f"This run's adapter is already merged: the full checkpoint is in storage at {storage_key(location)}."


def merged_prefix(run_id: object) -> str:
    """Where the merge job writes the checkpoint, `merge.json` last."""
    return f"runs/{run_id}/merged/"


class RunMerges:
    """A method here checks, then calls the Run's `@event` method, which only assigns (the events stay declared on
    the Run: `Run.MergeRequested`, ...)."""

    # provided by Run
    state: str
    adapter: dict[str, Any] | None
    merge: dict[str, Any] | None
    _merge_requested: Callable[..., None]
    _model_merged: Callable[..., None]
    _merge_failed: Callable[..., None]

    def request_merge(self, actor: dict[str, str]) -> None:
        if self.state not in FINISHED_WITH_ADAPTER or self.adapter is None:
            raise IllegalTransition(NOT_READY)
        if self.merge is not None and self.merge["state"] == MERGING:
            raise IllegalTransition(UNDER_WAY)
        if self.merge is not None and self.merge["state"] == MERGED:
            raise IllegalTransition(already_merged(self.merge["location"]))
        self._merge_requested(best_round=self.adapter["best_round"], actor=actor)

    def _require_merging(self) -> None:
        if self.merge is None or self.merge["state"] != MERGING:
            raise IllegalTransition(NOT_ASKED)

    def model_merged(self, location: str, files: list[str], size_bytes: int, actor: dict[str, str]) -> None:
        self._require_merging()
        self._model_merged(location=location, files=files, size_bytes=size_bytes, actor=actor)

    def merge_failed(self, message: str, actor: dict[str, str]) -> None:
        self._require_merging()
        self._merge_failed(message=message, actor=actor)
