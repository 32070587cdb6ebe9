"""The runs API: save, edit and delete a draft, list, read, launch, cancel, retry, duplicate and merge runs (RL, SFT,
DPO); read a run's audit timeline and an SFT or DPO run's steps.

Bodies are checked by the domain (`run_body_from_api`), so a bad setting is refused with the words the form
shows: 422 with {"errors": {field: message}}, and nothing is recorded.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar
from uuid import UUID

from litestar import Controller, Request, delete, get, post, put
from litestar.openapi.spec import Example
from litestar.params import Body

from app.runs.merging import ask_for_merge
from app.runs.projects import choose_project
from app.runs.readiness import launch_when_ready
from app.runs.schemas import CommandAnswer, RunOut
from app.shell.commands import OwnWrites
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from app.shell.jobs import jobs_of
from domain.application import Verity
from domain.errors import NotFound
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api
from domain.written import Written
from projections.rows import RunDetail, RunRow, StepRow, TimelineEntry
from projections.store import ReadModels

RUN_BODY_EXAMPLE = {"project": "Demo", **RunSettings().to_api()}
RUN_BODY = Body(
    title="Run",
    description=(
        'An RL run: training.objective "rl", training.method "lora", training.gpu_count 1 and a '
        "training.rl block (rounds, prompts_per_round, answers_per_prompt, max_answer_tokens, start_run, "
        "reward); every left-out "
        "setting takes its default. `project` is a project id or name (default: the organization's first); "
        '`kind` is "full" or "trial".'
    ),
    examples=[Example(summary="Every default", value=RUN_BODY_EXAMPLE)],
)


class RunsApiController(Controller):
    path = "/runs"
    tags: ClassVar[list[str]] = ["Runs"]

    @post("/", name="api:runs:save", status_code=201, sync_to_thread=True)
    def save(
        self,
        data: Annotated[dict[str, Any], RUN_BODY],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> RunOut:
        """Save a draft run (saving never starts a GPU)."""
        body = dict(data)
        project_id = choose_project(read_models, identity.organization_id, body.pop("project", None))
        draft = run_body_from_api(body)
        written = verity.save_run(identity.organization_id, project_id, draft, identity.actor)
        return self._after(own_writes, written, read_models, identity)

    @put("/{run_id:uuid}", name="api:runs:edit", sync_to_thread=True)
    def edit(
        self,
        run_id: UUID,
        data: Annotated[dict[str, Any], RUN_BODY],
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> RunOut:
        """Edit a draft: the body as for saving; the draft keeps its id and history. Any other state is refused."""
        body = dict(data)
        body.pop("project", None)  # a draft stays in its project
        written = verity.edit_run(identity.organization_id, run_id, run_body_from_api(body), identity.actor)
        return self._after(own_writes, written, read_models, identity)

    @delete("/{run_id:uuid}", name="api:runs:delete", status_code=200, sync_to_thread=True)
    def delete(
        self, run_id: UUID, verity: Verity, own_writes: OwnWritesDep, read_models: ReadModelsDep, identity: Identity
    ) -> RunOut:
        """Delete a draft: it leaves the runs list (state "deleted"); its events stay in the store and the feed."""
        written = verity.delete_run(identity.organization_id, run_id, identity.actor)
        return self._after(own_writes, written, read_models, identity)

    @get("/", name="api:runs:list", sync_to_thread=True)
    def list_runs(self, read_models: ReadModelsDep, identity: Identity) -> list[RunRow]:
        """The organization's runs, newest first."""
        return read_models.runs(identity.organization_id)

    @get("/{run_id:uuid}", name="api:runs:detail", sync_to_thread=True)
    def detail(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> RunDetail:
        return _found(read_models.run(identity.organization_id, run_id))

    @post("/{run_id:uuid}/launch", name="api:runs:launch", status_code=200, sync_to_thread=True)
    def launch(
        self,
        request: Request,
        run_id: UUID,
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> RunOut:
        """Launch a draft (RL needs the Pro plan, and an owner or member; 409 when its worker can't train it)."""
        written = launch_when_ready(verity.launch_run, request, read_models, identity, run_id)
        return self._after(own_writes, written, read_models, identity)

    @post("/{run_id:uuid}/cancel", name="api:runs:cancel", status_code=200, sync_to_thread=True)
    def cancel(
        self, run_id: UUID, verity: Verity, own_writes: OwnWritesDep, read_models: ReadModelsDep, identity: Identity
    ) -> RunOut:
        return self._after(
            own_writes, verity.cancel_run(identity.organization_id, run_id, identity.actor), read_models, identity
        )

    @post("/{run_id:uuid}/retry", name="api:runs:retry", status_code=201, sync_to_thread=True)
    def retry(
        self,
        request: Request,
        run_id: UUID,
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> RunOut:
        """Retry a failed or cancelled run: a new run with the same settings, launched at once."""
        written = launch_when_ready(verity.retry_run, request, read_models, identity, run_id)
        return self._after(own_writes, written, read_models, identity)

    @post("/{run_id:uuid}/duplicate", name="api:runs:duplicate", status_code=201, sync_to_thread=True)
    def duplicate(
        self, run_id: UUID, verity: Verity, own_writes: OwnWritesDep, read_models: ReadModelsDep, identity: Identity
    ) -> RunOut:
        """A new draft with the same settings."""
        written = verity.duplicate_run(identity.organization_id, run_id, identity.actor)
        return self._after(own_writes, written, read_models, identity)

    @post("/{run_id:uuid}/merge", name="api:runs:merge", status_code=202, sync_to_thread=True)
    def merge(
        self,
        request: Request,
        run_id: UUID,
        verity: Verity,
        own_writes: OwnWritesDep,
        read_models: ReadModelsDep,
        identity: Identity,
    ) -> RunOut:
        """Merge model: a job merges the adapter into the base model and writes the full checkpoint to the run's
        storage; `run.merge` says how it goes (merging, then merged with its location, or failed with why)."""
        written = ask_for_merge(verity, identity, run_id, jobs_of(request))
        return self._after(own_writes, written, read_models, identity)

    @get("/{run_id:uuid}/events", name="api:runs:events", sync_to_thread=True)
    def timeline(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> list[TimelineEntry]:
        """The run's audit timeline: who did what, when, in order."""
        _found(read_models.run(identity.organization_id, run_id))
        return read_models.timeline(identity.organization_id, run_id)

    @get("/{run_id:uuid}/steps", name="api:runs:steps", sync_to_thread=True)
    def steps(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> list[StepRow]:
        """An SFT or DPO run's optimizer steps, newest first: loss, and validation loss at each epoch's end."""
        _found(read_models.run(identity.organization_id, run_id))
        return read_models.steps(identity.organization_id, run_id)

    @staticmethod
    def _after(own_writes: OwnWrites, written: Written, read_models: ReadModels, identity: Identity) -> RunOut:
        own_writes.see(written.position)
        return RunOut(
            run=_found(read_models.run(identity.organization_id, written.id)),
            command=CommandAnswer(id=written.id, position=written.position),
        )


def _found(run: RunDetail | None) -> RunDetail:
    if run is None:
        raise NotFound("There is no such run in this organization.")
    return run
