"""The re-scorings API: re-score stored answers with another reward (POST /api/rescorings), read a re-scoring with
its per-round signal (GET /api/rescorings/{id}) and its answers, old and new score (GET /api/rescorings/{id}/answers).
"""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Controller, get, post

from app.auth.guard import ROLE_CHECKED_BY_DOMAIN
from app.evaluations.work_routes import detail_api, seen_reply
from app.probes.reads import AnswersUnreadable
from app.rescorings.reads import rescoring_context, stored_answers
from app.shell.dependencies import OwnWritesDep, ReadModelsDep, StorageDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotFound
from projections import rescorings as reads

ANSWERS_PAGE_MOST = 1000


class RescoringsApiController(Controller):
    path = "/rescorings"
    tags: ClassVar[list[str]] = ["Re-scorings"]

    @post("/", name="api:rescorings:create", status_code=201, sync_to_thread=True,
          opt={ROLE_CHECKED_BY_DOMAIN: True})
    def create(self, data: dict[str, Any], verity: Verity, own_writes: OwnWritesDep,
               identity: Identity) -> dict[str, Any]:
        """Body: {source: {"kind": "run", "id"} (a finished RL run) or {"kind": "probe", "id"} (a scored probe),
        reward (as a run's training.rl.reward: a preset and its settings, or a custom metric version), name?}.
        Needs the Pro plan and the member or owner role, as a probe does; the jobs score it. Nothing is sampled and
        the stored answers stay as they were."""
        written = verity.create_rescoring(
            identity.organization_id, source=data.get("source"), reward=data.get("reward"),
            actor=identity.actor, role=identity.role, name=str(data.get("name") or ""),
        )
        return seen_reply(own_writes, written)

    detail = detail_api("rescorings", "rescoring", rescoring_context, ("rescoring", "rounds"))

    @get("/{rescoring_id:uuid}/answers", name="api:rescorings:answers", sync_to_thread=True)
    def answers(self, rescoring_id: UUID, read_models: ReadModelsDep, identity: Identity, storage: StorageDep,
                moved: bool = False, offset: int = 0, limit: int = 200) -> dict[str, Any]:
        """Its answers in order (round, prompt, answer), each with its text, reference, old and new score and the
        metric's failure; `moved=true` keeps only those whose score changed. Read from its answers file in storage:
        `offset` and `limit` (at most 1,000) page through them."""
        rescoring = reads.rescoring(read_models.tables, identity.organization_id, rescoring_id)
        if rescoring is None or rescoring["summary"] is None:
            raise NotFound("There is no such re-scoring, or it has no answers yet.")
        try:
            answers = stored_answers(storage, rescoring["summary"], moved_only=moved, offset=max(offset, 0),
                                     limit=min(max(limit, 1), ANSWERS_PAGE_MOST))
        except AnswersUnreadable as problem:
            raise NotFound(f"The answers could not be read: {problem}") from None
        return {"answers": answers, "offset": max(offset, 0)}
