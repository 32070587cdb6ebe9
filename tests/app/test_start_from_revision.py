"""The Configure form's Start from lists only the finished full runs of the project that trained the revision
this run will pin (000: "If you typed a Model revision, the list holds only runs trained on it")."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from domain.runs.settings import run_body_from_api

if TYPE_CHECKING:
    from conftest import Console

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}


def finished_run(console: Console, name: str, revision: str | None, project_id: UUID | None = None) -> UUID:
    """A full run driven to Adapter ready, as the jobs would record it."""
    verity, owner = console.verity, console.verity_actor()
    body = {"name": name, "training": {"model_revision": revision, "rl": {"reward": MATH_PAIRS, "rounds": 1}}}
    run_id = verity.save_run(console.org_id, project_id or console.project_id, run_body_from_api(body), owner).id
    verity.launch_run(console.org_id, run_id, owner, "owner")
    verity.record_preparing(run_id)
    console.score_round(run_id, 0, None, 0.3)
    console.score_round(run_id, 1, 0.4, 0.35)
    verity.record_saving_adapter(run_id)
    verity.record_adapter_ready(run_id, 1, f"runs/{run_id}/adapter", "ab" * 32, 1024)
    return run_id


def start_from_options(html: str) -> str:
    """The <select> of Start from, as the page draws it."""
    start = html.index('name="start_run"')
    return html[start : html.index("</select>", start)]


def test_start_from_lists_only_runs_on_the_revision_the_new_run_will_pin(sqlite_console: Console) -> None:
    console = sqlite_console
    on_main = finished_run(console, "on main", None)
    on_abc = finished_run(console, "on abc123", "abc123")
    other_project = console.verity.create_project(
        console.org_id, "Other", "tiny-math", None, False, console.verity_actor()
    ).id
    elsewhere = finished_run(console, "other project", None, other_project)
    console.settle()

    empty = start_from_options(console.client.get("/runs/new").text)  # empty: the project pins none, so main
    assert str(on_main) in empty and str(on_abc) not in empty and str(elsewhere) not in empty

    # the form comes back (Rounds refused) with the revision typed: only the runs trained on it
    typed = {"name": "next", "kind": "full", "rounds": "0", "model_revision": "abc123"}
    again = console.client.post("/runs", data={**typed, "project": str(console.project_id)})
    assert again.status_code == 422
    listed = start_from_options(again.text)
    assert str(on_abc) in listed and str(on_main) not in listed
