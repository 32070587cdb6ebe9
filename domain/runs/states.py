"""The states of a run, their names on the page, and the groups the commands and the read models ask about."""

from __future__ import annotations

DRAFT, QUEUED, PREPARING, TRAINING = "draft", "queued", "preparing", "training"
SAVING_ADAPTER, ADAPTER_READY, COMPLETED, FAILED, CANCELLED = (
    "saving_adapter",
    "adapter_ready",
    "completed",
    "failed",
    "cancelled",
)
DELETED = "deleted"  # a draft taken off the Runs list; the event store keeps its history
STATUS_NAMES = {
    DRAFT: "Draft",
    QUEUED: "Queued",
    PREPARING: "Preparing",
    TRAINING: "Training",
    SAVING_ADAPTER: "Saving adapter",
    ADAPTER_READY: "Adapter ready",
    COMPLETED: "Completed",
    FAILED: "Failed",
    CANCELLED: "Cancelled",
    DELETED: "Deleted",
}
RUNNING = (QUEUED, PREPARING, TRAINING, SAVING_ADAPTER)
FINISHED_WITH_ADAPTER = (ADAPTER_READY, COMPLETED)


def status_line(state: str, rounds_scored: int, total_rounds: int) -> str:
    """ "Training · round 3 / 20" while it trains (the round in progress), else the state's name."""
    if state == TRAINING:
        return f"Training · round {min(max(rounds_scored, 1), total_rounds)} / {total_rounds}"
    return STATUS_NAMES[state]
