"""The runs API: save, edit and delete a draft, list, read, launch, cancel, retry, continue, duplicate and merge
runs (RL, SFT, DPO); read a run's audit timeline and an SFT or DPO run's steps.

Bodies are checked by the domain (`run_body_from_api`), so a bad setting is refused with the words the form
shows: 422 with {"errors": {field: message}}, and nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar
from uuid import UUID

from litestar import Request, delete, get, post, put
from litestar.openapi.spec import Example
from litestar.params import Body

from app.runs.merging import ask_for_merge
from app.runs.projects import choose_project
from app.runs.prompts import PromptQuery, PromptsPage, prompts_json
from app.runs.readiness import continue_when_ready, launch_when_ready
from app.runs.schemas import CommandAnswer, RunOut
from app.shell.console import Console, ConsoleController, ConsoleDep
from app.shell.dependencies import ReadModelsDep
from app.shell.identity import Identity
from app.shell.jobs import jobs_of
from domain.errors import NotFound
from domain.runs.run_settings import RunSettings
from domain.runs.settings import run_body_from_api
from domain.written import Written
from projections.rows import RunDetail, RunRow, StepRow, TimelineEntry

RUN_BODY_EXAMPLE = {"project": "Demo", **RunSettings().to_api()}
RUN_BODY = Body(
    title="Run",
    description=(
        'An RL run: training.objective "rl", training.method "lora", training.gpu_count 1 and a '
        "training.rl block (rounds, prompts_per_round, answers_per_prompt, max_answer_tokens, start_run, "
        "reward, epochs: passes over each round's answers, 1-4); training.advanced holds the rest, the clip range "
        "(clip_low, clip_high) and max_grad_norm (null: no clipping) among them; every left-out "
        "setting takes its default. `project` is a project id or name (default: the organization's first); "
        '`kind` is "full" or "trial".'
    ),
    examples=[Example(summary="Every default", value=RUN_BODY_EXAMPLE)],
)


class RunsApiController(ConsoleController):
    path = "/runs"
    tags: ClassVar[list[str]] = ["Runs"]

    @post("/", name="api:runs:save", status_code=201, sync_to_thread=True)
    def save(self, data: Annotated[dict[str, Any], RUN_BODY], console: ConsoleDep) -> RunOut:
        """Save a draft run (saving never starts a GPU)."""
        body = dict(data)
        project_id = choose_project(console.read_models, console.organization_id, body.pop("project", None))
        draft = run_body_from_api(body)
        return _answer(console, console.verity.save_run(console.organization_id, project_id, draft, console.actor))

    @put("/{run_id:uuid}", name="api:runs:edit", sync_to_thread=True)
    def edit(self, run_id: UUID, data: Annotated[dict[str, Any], RUN_BODY], console: ConsoleDep) -> RunOut:
        """Edit a draft: the body as for saving; the draft keeps its id and history. Any other state is refused."""
        body = dict(data)
        body.pop("project", None)  # a draft stays in its project
        draft = run_body_from_api(body)
        return _answer(console, console.verity.edit_run(console.organization_id, run_id, draft, console.actor))

    @delete("/{run_id:uuid}", name="api:runs:delete", status_code=200, sync_to_thread=True)
    def delete(self, run_id: UUID, console: ConsoleDep) -> RunOut:
        """Delete a draft: it leaves the runs list (state "deleted"); its events stay in the store and the feed."""
        return _answer(console, console.verity.delete_run(console.organization_id, run_id, console.actor))

    @get("/", name="api:runs:list", sync_to_thread=True)
    def list_runs(self, read_models: ReadModelsDep, identity: Identity) -> list[RunRow]:
        """The organization's runs, newest first."""
        return read_models.runs(identity.organization_id)

    @get("/{run_id:uuid}", name="api:runs:detail", sync_to_thread=True)
    def detail(self, run_id: UUID, read_models: ReadModelsDep, identity: Identity) -> RunDetail:
        return _found(read_models.run(identity.organization_id, run_id))

    @post("/{run_id:uuid}/launch", name="api:runs:launch", status_code=200, sync_to_thread=True)
    def launch(self, request: Request, run_id: UUID, console: ConsoleDep) -> RunOut:
        """Launch a draft (RL needs the Pro plan, and an owner or member; 409 when its worker can't train it)."""
        return _answer(console, _when_ready(console.verity.launch_run, request, console, run_id))

    @post("/{run_id:uuid}/retry", name="api:runs:retry", status_code=201, sync_to_thread=True)
    def retry(self, request: Request, run_id: UUID, console: ConsoleDep) -> RunOut:
        """Retry a failed or cancelled run: a new run with the same settings, launched at once."""
        return _answer(console, _when_ready(console.verity.retry_run, request, console, run_id))

    @post("/{run_id:uuid}/continue", name="api:runs:continue", status_code=200, sync_to_thread=True)
    def continue_run(
        self, request: Request, run_id: UUID, console: ConsoleDep, data: dict[str, Any] | None = None
    ) -> RunOut:
        """Continue from round N: a run stopped by its time limit or out of memory, or cancelled, goes on from the
        checkpoint of its last finished round, as the same run. Optional body: {"rounds": 30} for more rounds,
        {"time_limit_hours": 4} for a new time limit, counted from now; 422 for a bad one, 409 for a run that
        can't be continued (why, in words)."""
        return _answer(console, continue_when_ready(request, console, run_id, data or {}))

    @post("/{run_id:uuid}/cancel", name="api:runs:cancel", status_code=200, sync_to_thread=True)
    def cancel(self, run_id: UUID, console: ConsoleDep) -> RunOut:
        return _answer(console, console.verity.cancel_run(console.organization_id, run_id, console.actor))

    @post("/{run_id:uuid}/duplicate", name="api:runs:duplicate", status_code=201, sync_to_thread=True)
    def duplicate(self, run_id: UUID, console: ConsoleDep) -> RunOut:
        """A new draft with the same settings."""
        return _answer(console, console.verity.duplicate_run(console.organization_id, run_id, console.actor))

    @post("/{run_id:uuid}/merge", name="api:runs:merge", status_code=202, sync_to_thread=True)
    def merge(self, request: Request, run_id: UUID, console: ConsoleDep) -> RunOut:
        """Merge model: a job merges the adapter into the base model and writes the full checkpoint to the run's
        storage; `run.merge` says how it goes (merging, then merged with its location, or failed with why)."""
        return _answer(console, ask_for_merge(console.verity, console.identity, run_id, jobs_of(request)))

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

    @get("/{run_id:uuid}/prompts", name="api:runs:prompts", sync_to_thread=True)
    def prompts(
        self, request: Request, run_id: UUID, read_models: ReadModelsDep, identity: Identity
    ) -> dict[str, Any]:
        """Every training prompt an RL run drew, with its history across rounds (each draw's mean score, share of
        answers passing, whether its group taught anything) and its verdict (learned, still failing, always
        passing, flipping, never taught), and the share of sampling seconds and tokens spent on groups that taught
        nothing, per round and in all, with the advice that follows. Optional `verdict` keeps one verdict's
        prompts; `sort` is drawn (default), mean, mean-desc, last or index. Paged: `limit` prompts (100 unless
        asked, at most 500) from `offset` (0); `total` counts the prompts matched and `next` links the next page
        (null on the last)."""
        run = _found(read_models.run(identity.organization_id, run_id))
        params = request.query_params
        return prompts_json(
            read_models, identity, run, PromptQuery.of(params), PromptsPage.of(params), request.url.path
        )


def _when_ready(command: Callable[..., Written], request: Request, console: Console, run_id: UUID) -> Written:
    """Launch or Retry (`command`) once launch readiness agrees."""
    return launch_when_ready(command, request, console.read_models, console.identity, run_id)


def _answer(console: Console, written: Written) -> RunOut:
    """A command's answer, once the read models show it: the run it saved and where its events stand."""
    console.own_writes.see(written.position)
    return RunOut(
        run=_found(console.read_models.run(console.organization_id, written.id)),
        command=CommandAnswer(id=written.id, position=written.position),
    )


def _found(run: RunDetail | None) -> RunDetail:
    if run is None:
        raise NotFound("There is no such run in this organization.")
    return run
