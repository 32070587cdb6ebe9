"""The loop pages; a live loop's body re-asks for itself every 2 s, like a run's parts."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from app.evaluations.work_routes import WorkPagesController, detail_page, list_page, stop_page
from app.loops.chart import bar_chart
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotFound
from domain.loops.loop import SCORE_COLUMNS
from projections import evaluations as reads


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start:
        return None
    finish = datetime.fromisoformat(end) if end else datetime.now(datetime.fromisoformat(start).tzinfo)
    return (finish - datetime.fromisoformat(start)).total_seconds()


def duration(seconds: float | None) -> str:
    """ "4h 23m", "2m 05s", "41s"."""
    if seconds is None:
        return ""
    whole = int(seconds)
    if whole >= 3600:
        return f"{whole // 3600}h {whole % 3600 // 60:02d}m"
    if whole >= 60:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole}s"


def loop_context(read_models: Any, identity: Identity, loop_id: UUID) -> dict[str, Any]:
    loop = reads.loop(read_models.tables, identity.organization_id, loop_id)
    if loop is None:
        raise NotFound("There is no such training loop.")
    rounds = reads.loop_rounds(read_models.tables, loop_id)
    for row in rounds:
        row["duration"] = duration(_seconds(row["started_at"], row["ended_at"]))
    end = None if loop["live"] else loop["updated_at"]
    score_column = SCORE_COLUMNS[loop["score_column"]]
    return {
        "loop": loop, "rounds": rounds, "live": loop["live"], "score_column": score_column,
        "chart": bar_chart(rounds, loop["target"], score_column),
        "section": "loops", "identity": identity,
        "elapsed": duration(_seconds(rounds[0]["started_at"], end) if rounds else None),
    }


class LoopsPageController(WorkPagesController):
    path = "/loops"

    list_loops = list_page("loops", reads.loops)
    detail = detail_page("loops", "loop", loop_context)
    stop = stop_page("loops", "loop", Verity.stop_loop)
