"""The console's Start an automated loop form (001): Name, Benchmark, Score Column, Target, Max Rounds, Give Up
After, Reclaim storage between rounds, and the RL settings every round's run takes."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.evaluations.sending import send_loop_step
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import NotAllowed, SettingsInvalid
from domain.evaluations.benchmarks import BENCHMARKS
from domain.loops.loop import SCORE_COLUMNS
from domain.runs.settings import run_body_from_api

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
RL_FIELDS = ("rounds", "prompts_per_round", "answers_per_prompt", "max_answer_tokens")
DEFAULTS = {"name": "math-pairs to 35%", "benchmark": "math_pairs_held_out", "score_column": "accuracy",
            "target": "35", "max_rounds": "8", "give_up_after": "2", "reclaim_storage": "on", "rounds": "20",
            "prompts_per_round": "64", "answers_per_prompt": "8", "max_answer_tokens": "512",
            "learning_rate": "0.000005", "benchmark_size": "64"}


def _number(text: str) -> Any:
    """A whole number or a decimal as typed; anything else goes to the domain as is, to be refused in words."""
    text = (text or "").strip()
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _page(read_models: Any, identity: Identity, values: dict[str, str], errors: dict[str, str],
          status_code: int = 200) -> Template:
    context = {"section": "loops", "identity": identity, "values": values, "errors": errors,
               "projects": read_models.projects(identity.organization_id), "benchmarks": BENCHMARKS,
               "score_columns": SCORE_COLUMNS}
    return Template("loops/new.html", context=context, status_code=status_code)


class NewLoopPageController(Controller):
    path = "/loops/new"
    include_in_schema = False

    @get("/", name="loops:new", sync_to_thread=True)
    def form(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        return _page(read_models, identity, dict(DEFAULTS), {})

    @post("/", name="loops:create", sync_to_thread=True)
    def create(self, request: Request, data: Annotated[dict[str, str], FORM], verity: Verity,
               read_models: ReadModelsDep, own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        values = {**data, "reclaim_storage": "on" if data.get("reclaim_storage") else ""}
        try:
            project_id = UUID(data.get("project", ""))
        except ValueError:
            return _page(read_models, identity, values, {"project": "Choose a project."}, 400)
        try:
            draft = run_body_from_api({
                "name": data.get("name", ""),
                "training": {"rl": {**{f: _number(data.get(f, "")) for f in RL_FIELDS}, "reward": None},
                             "advanced": {"learning_rate": _number(data.get("learning_rate", ""))}},
            })
            written = verity.create_loop(
                identity.organization_id, project_id, name=data.get("name", ""),
                benchmark=data.get("benchmark", ""), score_column=data.get("score_column", ""),
                target_percent=_number(data.get("target", "")), max_rounds=_number(data.get("max_rounds", "")),
                give_up_after=_number(data.get("give_up_after", "")), reclaim_storage=bool(values["reclaim_storage"]),
                draft=draft, actor=identity.actor, role=identity.role,
                benchmark_size=_number(data.get("benchmark_size", "64")),
            )
        except SettingsInvalid as problem:
            return _page(read_models, identity, values, problem.errors, 400)
        except NotAllowed as refusal:
            return _page(read_models, identity, values, {"": refusal.message}, 403)
        own_writes.see(written.position)
        send_loop_step(request, written.id)
        return Redirect(path=f"/loops/{written.id}", status_code=303)
