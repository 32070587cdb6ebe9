"""What each agent tool does, as the JSON API does it: the same domain commands, the same read models, the same
refusals. Each method takes the caller (the token's identity and its HTTP request) and answers a JSON object, or
raises the domain's error, whose words the tool error carries.

Nothing here decides what may happen: a launch's plan and role are the domain's (`Verity.start_training`), and a
change by a viewer is refused with the same table and words as the console's guard (domain/access/roles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import msgspec
from litestar import Request

from app.agent.lookups import baseline_id, dataset_version_id
from app.evaluations.pages import evaluation_context
from app.runs.api import _found as found_run
from app.runs.projects import choose_project
from app.runs.readiness import launch_problem
from app.runs.samples import SamplesUnreadable, offered_rounds, read_round
from app.shell.commands import OwnWrites
from app.shell.identity import Identity
from app.shell.jobs import wait_until_sent
from domain.access import roles
from domain.application import Verity
from domain.errors import DomainError, NotAllowed, NotFound
from domain.runs.settings import run_body_from_api
from projections import evaluations as reads
from projections.rows import RoundRow, RunDetail
from projections.store import ReadModels

NO_SUCH_RUN = "There is no such run in this organization."
NO_SUCH_EVALUATION = "There is no such evaluation."
SAMPLES_UNREADABLE = "The samples could not be loaded: {reason}"


@dataclass(frozen=True)
class Caller:
    """Who calls a tool: the identity its API token resolved to, and the HTTP request that carried the call (its
    app knows the jobs: launch readiness, how far they have sent; its address gives the console's pages)."""

    identity: Identity
    request: Request[Any, Any, Any]

    def page(self, route: str, **ids: UUID) -> str:
        return self.request.url_for(route, **ids)

    def may_change(self) -> None:
        """A viewer changes nothing, in the guard's words."""
        refusal = self.identity.refusal(roles.CHANGE)
        if refusal is not None:
            raise NotAllowed(refusal)


@dataclass
class ConsoleTools:
    verity: Verity
    read_models: ReadModels
    own_writes: OwnWrites
    storage: Callable[[], Any]  # verity.storage.FileStorage, opened when samples are first read

    # --- start_training --------------------------------------------------------------------------------------
    def start_training(
        self,
        caller: Caller,
        *,
        project: str | None,
        dataset_version: str | None,
        baseline: str | None,
        rl: dict[str, int | None],
        start_run: str | None,
        trial: bool,
        name: str | None,
    ) -> dict[str, Any]:
        org_id = caller.identity.organization_id
        project_id = choose_project(self.read_models, org_id, project)
        version = dataset_version_id(self.read_models, org_id, dataset_version)
        defaults = self._run_defaults(org_id, project_id)
        given = {key: value for key, value in rl.items() if value is not None}
        training = {
            **defaults, "objective": "rl", "method": "lora", "gpu_count": 1,
            "rl": {**defaults.get("rl", {}), **given, "start_run": start_run or None, "reward": None},
        }
        draft = run_body_from_api({
            "name": name or "", "kind": "trial" if trial else "full", "dataset_version": version,
            "baseline": baseline_id(self.read_models, org_id, baseline, version), "training": training,
        })
        identity = caller.identity
        written = self.verity.start_training(
            org_id, project_id, draft, identity.actor, identity.role,
            readiness=lambda settings: launch_problem(caller.request, settings),  # as the API's launch asks it
        )
        wait_until_sent(caller.request, written.position)  # the jobs send it from the event log
        self.own_writes.see(written.position)
        run = self._run(caller, written.id)
        return {"run_id": str(run.id), "name": run.name, "kind": run.kind, "state": run.state,
                "status": run.status_line, "reward": run.reward_label,
                "page": caller.page("runs:detail", run_id=run.id)}

    def _run_defaults(self, org_id: UUID, project_id: UUID) -> dict[str, Any]:
        project = next((p for p in self.read_models.projects(org_id) if p.id == project_id), None)
        return dict(project.run_defaults) if project is not None and project.run_defaults else {}

    # --- what a run can be trained on --------------------------------------------------------------------------
    def list_projects(self, caller: Caller) -> dict[str, Any]:
        projects = self.read_models.projects(caller.identity.organization_id)
        return {"projects": [{"id": str(p.id), "name": p.name, "model": p.model, "revision": p.revision}
                             for p in projects]}

    def list_dataset_versions(self, caller: Caller) -> dict[str, Any]:
        versions = self.read_models.dataset_versions(caller.identity.organization_id)  # type: ignore[attr-defined]
        return {"dataset_versions": [
            {"id": str(v.id), "label": v.label, "dataset": v.dataset_name, "number": v.number,
             "examples": v.split_counts, "shape": v.shape, "has_images": v.has_images, "archived": v.archived}
            for v in versions
        ]}

    def list_baselines(self, caller: Caller) -> dict[str, Any]:
        org_id = caller.identity.organization_id
        tables = self.read_models.tables  # type: ignore[attr-defined]
        baselines = []
        for evaluation_id, label in reads.completed_baselines(tables, org_id, every_source=True):
            evaluation = reads.evaluation(tables, org_id, UUID(evaluation_id))
            if evaluation is None:
                continue
            kind, _, source = str(evaluation["source_key"]).partition(":")
            baselines.append({
                "id": evaluation_id, "name": evaluation["name"], "label": label,
                "dataset_version": source if kind == "dataset_version" else None,
                "tests": evaluation["source_label"], "main_metric": evaluation["metric_label"],
                "score": evaluation["score"], "completed_at": evaluation["updated_at"],
            })
        return {"baselines": baselines}

    # --- following a run ---------------------------------------------------------------------------------------
    def list_runs(self, caller: Caller) -> dict[str, Any]:
        runs = self.read_models.runs(caller.identity.organization_id)
        return {"runs": [{"id": str(r.id), "name": r.name, "kind": r.kind, "state": r.state, "status": r.status_line,
                          "reward": r.reward_label, "objective": r.objective, "created_at": r.created_at}
                         for r in runs]}

    def run_status(self, caller: Caller, run_id: str) -> dict[str, Any]:
        run = self._run(caller, run_id)
        return {**msgspec.to_builtins(run), "page": caller.page("runs:detail", run_id=run.id)}

    def run_rounds(self, caller: Caller, run_id: str) -> dict[str, Any]:
        run = self._run(caller, run_id)
        rounds = self.read_models.rounds(caller.identity.organization_id, run.id)
        return {"run_id": str(run.id), "status": run.status_line, "rounds": [_round(r) for r in rounds]}

    def run_ending(self, caller: Caller, run_id: str) -> dict[str, Any]:
        run = self._run(caller, run_id)
        return {
            "run_id": str(run.id), "state": run.state, "status": run.status_line,
            "ended": not run.live and run.state != "draft", "how_it_ended": run.ended, "note": run.note,
            "stop_reason": run.stop_reason, "stop_log_line": run.stop_log_line,
            "kept_starting_adapter": run.kept_starting_adapter, "failure": run.failure, "best_round": run.best_round,
            "best_validation": run.best_validation, "adapter": run.adapter, "trial_report": run.trial_report,
        }

    def run_samples(self, caller: Caller, run_id: str, round_number: int | None) -> dict[str, Any]:
        run = self._run(caller, run_id)
        files = self.read_models.samples(caller.identity.organization_id, run.id)
        offered = offered_rounds(files)
        chosen = round_number if round_number is not None else (offered[0] if offered else None)
        prompts: list[dict[str, Any]] = []
        if chosen is not None:
            try:
                prompts = [msgspec.to_builtins(sample) for sample in read_round(self.storage(), files, chosen)]
            except SamplesUnreadable as problem:
                raise DomainError(SAMPLES_UNREADABLE.format(reason=problem)) from None
        return {"run_id": str(run.id), "rounds_offered": offered, "round": chosen, "prompts": prompts}

    def cancel_run(self, caller: Caller, run_id: str) -> dict[str, Any]:
        caller.may_change()
        org_id = caller.identity.organization_id
        written = self.verity.cancel_run(org_id, _id(run_id, NO_SUCH_RUN), caller.identity.actor)
        self.own_writes.see(written.position)
        run = self._run(caller, written.id)
        return {"run_id": str(run.id), "state": run.state, "status": run.status_line}

    # --- judging an adapter --------------------------------------------------------------------------------------
    def score_against_baseline(self, caller: Caller, run_id: str) -> dict[str, Any]:
        caller.may_change()
        org_id = caller.identity.organization_id
        written = self.verity.score_against_baseline(org_id, _id(run_id, NO_SUCH_RUN), caller.identity.actor)
        self.own_writes.see(written.position)  # the jobs evaluate it, as the event log tells them
        return {**self.evaluation_result(caller, str(written.id)),
                "page": caller.page("evaluations:detail", evaluation_id=written.id)}

    def evaluation_result(self, caller: Caller, evaluation_id: str) -> dict[str, Any]:
        context = evaluation_context(self.read_models, caller.identity, _id(evaluation_id, NO_SUCH_EVALUATION))
        evaluation = context["evaluation"]
        comparison = context["comparison"]
        answer: dict[str, Any] = {
            "evaluation_id": evaluation["id"], "name": evaluation["name"], "state": evaluation["state"],
            "status": evaluation["status"], "tests": evaluation["source_label"],
            "main_metric": evaluation["metric_label"], "score": evaluation["score"],
            "breakdown": evaluation["breakdown"], "failure": evaluation["failure"],
            "adapter_run": evaluation["adapter_run"], "baseline_id": evaluation["baseline_id"],
            "examples": len(context["results"]),
        }
        if comparison is not None:
            answer["against_baseline"] = {
                "baseline_score": comparison["baseline"]["score"], "adapter_score": comparison["adapter"]["score"],
                "difference": comparison["difference"],
                "better": sum(1 for row in comparison["rows"] if (row["difference"] or 0) > 0),
                "worse": sum(1 for row in comparison["rows"] if (row["difference"] or 0) < 0),
            }
        return answer

    def _run(self, caller: Caller, run_id: str | UUID) -> RunDetail:
        run = self.read_models.run(caller.identity.organization_id, _id(str(run_id), NO_SUCH_RUN))
        return found_run(run)


def _id(text: str, not_found: str) -> UUID:
    """An id as an agent sends it; one that is not an id names nothing, as an unknown one."""
    try:
        return UUID(str(text).strip())
    except ValueError:
        raise NotFound(not_found) from None


def _round(row: RoundRow) -> dict[str, Any]:
    """A row of the run page's Rounds table, with the seconds of each part and its Training logs line."""
    return {
        "round": row.round_number, "of": row.rounds_total, "reward": row.reward,
        "validation_reward": row.validation_reward, "signal": row.signal, "cut_off": row.cut_off,
        "metric_failures": row.metric_failures, "updated": row.updated, "loss": row.loss,
        "best_round": row.best_round,
        "seconds": {"sampling": row.sampling_seconds, "grading": row.grading_seconds, "update": row.update_seconds,
                    "validation": row.validation_seconds},
        "log_line": row.log_line,
    }
