"""The probe pages under Tune: the list, Probe a reward (the form), a probe's page (whose body re-asks for itself
every 2 s while it samples; Cancel while queued or sampling) and one prompt's answers, read from the answers file
when opened."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any
from uuid import UUID

from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.auth.guard import READ_ONLY
from app.evaluations.forms import evaluation_metric_choices, scoring_fields, scoring_of_form
from app.evaluations.work_routes import WorkPagesController, detail_page, list_page
from app.metrics.choices import custom_reward_choices
from app.probes.reads import AnswersUnreadable, probe_context, prompt_answers
from app.runs.configure import start_from_choices
from app.shell.commands import redirect_once_seen
from app.shell.dependencies import OwnWritesDep, ReadModelsDep, StorageDep
from app.shell.identity import Identity
from domain.access.roles import LAUNCH
from domain.application import Verity
from domain.errors import DomainError, NotFound, SettingsInvalid
from domain.rewards.config import CUSTOM_PREFIX
from projections import probes as reads

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
MATH_PAIRS = "math_pairs"
NUMBERS = ("prompts", "answers_per_prompt", "max_answer_tokens", "seed")
DEFAULTS = {"name": "", "source": MATH_PAIRS, "metric": "numeric:numeric_accuracy", "prompts": "64",
            "answers_per_prompt": "8", "max_answer_tokens": "512", "seed": "0"}


def reward_choices(read_models: Any, org_id: UUID) -> list[tuple[str, str]]:
    """Every reward a run may train toward: the built-in metrics, then the organization's custom metric versions
    (scoring Q&A answers)."""
    return evaluation_metric_choices() + [(f"qa:{value}", label) for value, label in
                                          custom_reward_choices(read_models, org_id)]


def prompt_choices(read_models: Any, org_id: UUID) -> list[tuple[str, str]]:
    choices = [(MATH_PAIRS, "Math Pairs (built-in task)")]
    for version in read_models.dataset_versions(org_id):
        if not version.archived and version.split_counts.get("train"):
            choices.append((f"version:{version.id}",
                            f"{version.label} · {version.split_counts['train']:,} training examples"))
    return choices


def reward_of_form(values: Mapping[str, str]) -> dict[str, Any]:
    """The reward the form names: its kind of answers and settings read as the New evaluation form reads them."""
    scoring, metric = scoring_of_form(values)
    reward = {**scoring, "metric": metric}
    if metric.startswith(CUSTOM_PREFIX):
        reward["custom_metric"] = metric.removeprefix(CUSTOM_PREFIX)
    return reward


def _number(value: str) -> Any:
    return int(value) if value.strip().isdigit() else value


def _page(read_models: Any, identity: Identity, values: Mapping[str, str], errors: Mapping[str, str],
          status_code: int = 200) -> Template:
    errors = {f"reward_{key.removeprefix('reward.')}" if key.startswith("reward.") else key: message
              for key, message in errors.items()}
    context = {
        "section": "probes", "identity": identity, "values": values, "errors": errors,
        "projects": read_models.projects(identity.organization_id),
        "sources": prompt_choices(read_models, identity.organization_id),
        "metrics": reward_choices(read_models, identity.organization_id),
        "adapters": start_from_choices(read_models, identity, values),
        "scoring_fields": scoring_fields(values, errors),
    }
    return Template("probes/new.html", context=context, status_code=status_code)


class ProbesPageController(WorkPagesController):
    path = "/probes"

    list_probes = list_page("probes", reads.probes)
    detail = detail_page("probes", "probe", probe_context)

    @get("/new", name="probes:new", sync_to_thread=True)
    def form(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _page(read_models, identity, DEFAULTS, {})

    @post("/settings", name="probes:settings", sync_to_thread=True, opt={READ_ONLY: True})
    def settings(self, data: Annotated[dict[str, str], FORM]) -> Template:
        """The chosen reward's settings, redrawn by htmx when Reward metric changes."""
        return Template("evaluations/scoring_settings.html", context={"scoring_fields": scoring_fields(data, {})})

    @post("/new", name="probes:create", sync_to_thread=True)
    def create(self, data: Annotated[dict[str, str], FORM], verity: Verity, read_models: ReadModelsDep,
               own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        if (refused := identity.refusal(LAUNCH)) is not None:  # the form again, as typed, with why not
            return _page(read_models, identity, data, {"": refused}, 403)
        source = data.get("source", "")
        try:
            project_id = UUID(data.get("project", ""))
            adapter_run = UUID(data["adapter_run"]) if data.get("adapter_run") else None
        except ValueError:
            return _page(read_models, identity, data, {"project": "Choose a project."}, 400)
        try:
            written = verity.create_probe(
                identity.organization_id, project_id, name=data.get("name", ""),
                source={"kind": "math_pairs"} if source == MATH_PAIRS else {
                    "kind": "dataset_version", "id": source.removeprefix("version:")},
                reward=reward_of_form(data), actor=identity.actor, role=identity.role, adapter_run=adapter_run,
                **{name: _number(data.get(name, DEFAULTS[name])) for name in NUMBERS},
            )
        except SettingsInvalid as problem:
            return _page(read_models, identity, data, problem.errors, 400)
        except DomainError as refused:  # the plan, in the domain's words
            return _page(read_models, identity, data, {"": refused.message}, 403)
        own_writes.see(written.position)  # the jobs sample and score it, as the event log tells them
        return Redirect(path=f"/probes/{written.id}", status_code=303)

    @post("/{probe_id:uuid}/cancel", name="probes:cancel", sync_to_thread=True)
    def cancel(self, probe_id: UUID, verity: Verity, own_writes: OwnWritesDep, identity: Identity) -> Redirect:
        """Cancel, then the probe's page once the read models show it Cancelled (a viewer is refused by the guard)."""
        written = verity.cancel_probe(identity.organization_id, probe_id, identity.actor, identity.role)
        return redirect_once_seen(own_writes, written.position, f"/probes/{probe_id}")

    @get("/{probe_id:uuid}/answers/{line:int}", name="probes:answers", sync_to_thread=True)
    def answers(self, request: Request[Any, Any, Any], probe_id: UUID, line: int, read_models: ReadModelsDep,
                identity: Identity, storage: StorageDep) -> Template:
        """One prompt's answers with their scores, read from the answers file in storage when the prompt opens."""
        probe = reads.probe(read_models.tables, identity.organization_id, probe_id)
        if probe is None or probe["summary"] is None:
            raise NotFound("There is no such probe, or it has no answers yet.")
        try:
            context: dict[str, Any] = {"sample": prompt_answers(storage, probe["summary"], line), "problem": None}
        except AnswersUnreadable as problem:
            context = {"sample": None, "problem": str(problem)}
        return Template("probes/answers.html", context={**context, "probe": probe, "line": line})
