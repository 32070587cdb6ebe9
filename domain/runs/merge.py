"""The words of Merge model: a finished run's adapter merged into its base model by a job, as events on the run.

A merge is asked for (MergeRequested), then the job records that the full checkpoint is written (ModelMerged)
or why it is not (MergeFailed). A failed merge may be asked for again; one under way or done may not.
"""

from __future__ import annotations

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
