"""Why Queued work waits, in words: "Waiting for the worker: it is training run math (round 3 of 40)."

On the embedded default one worker, inside the console's process, takes one job at a time from the local queue:
a run's launch, an evaluation, a loop's or an experiment's step (whose run or evaluation it does in the same job).
So a Queued evaluation, experiment or loop waits until the job in hand ends, and the read models say which job
that is: a run Preparing, Training or Saving adapter, or an evaluation being scored. Work of another organization
is not named. With a broker (production) workers are elsewhere and many: the page says nothing of them.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.response import Template

from app.shell.identity import Identity
from projections import evaluations as reads
from projections.rows import RunRow

EMBEDDED_WORKER = "embedded_worker"  # the app's state says so when `verity serve` runs the worker in-process
HELD_BY_THE_WORKER = ("preparing", "training", "saving_adapter")
ANOTHER_ORGANIZATION = "it is busy with another organization's work"


def waiting_for_the_worker(request: Request[Any, Any, Any], read_models: Any, identity: Identity) -> str | None:
    """What Queued work is waiting for, or None where the worker is not this process's."""
    if not request.app.state.get(EMBEDDED_WORKER):
        return None
    own = str(identity.organization_id)
    run = next((r for r in read_models.live_runs() if r.state in HELD_BY_THE_WORKER), None)
    if run is not None:
        return f"Waiting for the worker: {_run_words(run) if str(run.org_id) == own else ANOTHER_ORGANIZATION}."
    evaluation = next(iter(reads.running_evaluations(read_models.tables)), None)
    if evaluation is not None:
        scoring = f"it is scoring evaluation {evaluation['name']}"
        return f"Waiting for the worker: {scoring if evaluation['org_id'] == own else ANOTHER_ORGANIZATION}."
    return "Waiting for the worker to take it."


def queued_work_page(
    request: Request[Any, Any, Any],
    read_models: Any,
    identity: Identity,
    context: dict[str, Any],
    work: str,
    folder: str,
) -> Template:
    """The page of an evaluation, experiment or loop (`context[work]`), saying what it waits for while Queued; its
    body alone (`<folder>/body.html`) when htmx re-asks for it every 2 s, the whole page otherwise."""
    queued = context[work]["state"] == "queued"
    context["waiting"] = waiting_for_the_worker(request, read_models, identity) if queued else None
    template = "body.html" if request.headers.get("hx-request") else "detail.html"
    return Template(f"{folder}/{template}", context=context)


def _run_words(run: RunRow) -> str:
    name = run.name or "Untitled run"
    if run.state == "preparing":
        return f"it is preparing run {name}"
    if run.state == "saving_adapter":
        return f"it is saving run {name}'s adapter"
    if run.objective == "rl":
        return f"it is training run {name} (round {min(run.rounds_done + 1, run.rounds_total)} of {run.rounds_total})"
    if run.steps_total:
        return f"it is training run {name} (step {run.steps_logged} of {run.steps_total})"
    return f"it is training run {name}"
