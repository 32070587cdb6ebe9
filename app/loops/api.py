"""The training-loops API: start a loop, read one with its rounds, stop it."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Controller

from app.evaluations.work_routes import create_api, detail_api, stop_api
from app.loops.pages import loop_context
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.runs.settings import run_body_from_api
from domain.written import Written


def create_loop(verity: Verity, data: dict[str, Any], identity: Identity) -> Written:
    """Body: {project_id, name, benchmark, score_column, target (percent), max_rounds, give_up_after,
    reclaim_storage, training: {...the run body's training block...}}."""
    try:
        project_id = UUID(str(data.get("project_id")))
    except ValueError:
        raise SettingsInvalid({"project_id": "project_id must be a project's ID."}) from None
    draft = run_body_from_api({"name": data.get("name") or "", "training": data.get("training") or {}})
    return verity.create_loop(
        identity.organization_id, project_id, name=str(data.get("name") or ""),
        benchmark=str(data.get("benchmark") or "math_pairs_held_out"),
        score_column=str(data.get("score_column") or "accuracy"), target_percent=data.get("target"),  # type: ignore[arg-type]
        max_rounds=data.get("max_rounds", 8), give_up_after=data.get("give_up_after", 2),
        reclaim_storage=bool(data.get("reclaim_storage", True)), draft=draft, actor=identity.actor,
        role=identity.role, benchmark_size=data.get("benchmark_size", 64),
    )


class LoopsApiController(Controller):
    path = "/loops"
    tags: ClassVar[list[str]] = ["Training loops"]

    create = create_api("loops", create_loop)
    detail = detail_api("loops", "loop", loop_context, ("loop", "rounds"))
    stop = stop_api("loops", "loop", Verity.stop_loop)
