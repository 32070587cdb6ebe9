"""The probes API: probe a reward (POST /api/probes), read a probe with its verdict, prompts and timeline
(GET /api/probes/{id}), cancel a queued or sampling one (POST /api/probes/{id}/cancel)."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID

from litestar import Controller, post

from app.auth.guard import ROLE_CHECKED_BY_DOMAIN
from app.evaluations.work_routes import detail_api, seen_reply
from app.probes.reads import probe_context
from app.runs.projects import choose_project
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from app.shell.ids import body_id
from domain.application import Verity


class ProbesApiController(Controller):
    path = "/probes"
    tags: ClassVar[list[str]] = ["Probes"]

    @post("/", name="api:probes:create", status_code=201, sync_to_thread=True, opt={ROLE_CHECKED_BY_DOMAIN: True})
    def create(self, data: dict[str, Any], verity: Verity, read_models: ReadModelsDep, own_writes: OwnWritesDep,
               identity: Identity) -> dict[str, Any]:
        """Body: {project (id or name; the first project when left out), name?, source: {"kind": "math_pairs"} or
        {"kind": "dataset_version", "id"}, reward (as a run's training.rl.reward), adapter_run? (a finished run
        whose adapter answers), prompts? (64), answers_per_prompt? (8), max_answer_tokens? (512), seed? (0)}. Needs
        the Pro plan and the member or owner role, as a trial does; the jobs sample and score it."""
        org_id = identity.organization_id
        written = verity.create_probe(
            org_id, choose_project(read_models, org_id, data.get("project")), name=str(data.get("name") or ""),
            source=data.get("source"), reward=data.get("reward"), actor=identity.actor, role=identity.role,
            adapter_run=body_id(data, "adapter_run"), prompts=data.get("prompts", 64),
            answers_per_prompt=data.get("answers_per_prompt", 8),
            max_answer_tokens=data.get("max_answer_tokens", 512), seed=data.get("seed", 0),
        )
        return seen_reply(own_writes, written)

    detail = detail_api("probes", "probe", probe_context, ("probe", "prompts", "timeline"))

    @post("/{probe_id:uuid}/cancel", name="api:probes:cancel", status_code=200, sync_to_thread=True,
          opt={ROLE_CHECKED_BY_DOMAIN: True})
    def cancel(self, probe_id: UUID, verity: Verity, own_writes: OwnWritesDep, identity: Identity) -> dict[str, Any]:
        """Cancel a queued or sampling probe: the jobs stop its process and it records no score. Needs the member
        or owner role, as probing does; a probe that already ended is refused (409) with its status."""
        written = verity.cancel_probe(identity.organization_id, probe_id, identity.actor, identity.role)
        return seen_reply(own_writes, written)
