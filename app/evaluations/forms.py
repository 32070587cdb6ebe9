"""The console's New evaluation form: the base model (or a finished run's adapter) on a dataset version's test
examples or the Math Pairs held-out benchmark, with a kind of answers and a main metric."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.evaluations.sending import send_evaluation
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.evaluations.benchmarks import BENCHMARKS
from domain.rewards.config import METRICS, NOT_A_REWARD, PRESET_NAMES

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
MATH_PAIRS_SOURCE = "benchmark:math_pairs_held_out"


def metric_choices() -> list[tuple[str, str]]:
    """("qa:token_f1", "Token F1 · Q&A"), ..., the LLM judge and RadEval too: an evaluation may use them."""
    choices = [(f"{preset}:{metric}", f"{name} · {PRESET_NAMES[preset]}")
               for preset, metrics in METRICS.items() for metric, name in metrics.items()]
    choices += [(f"qa:{metric}", f"{name} · Q&A") for metric, name in NOT_A_REWARD.items()]
    return choices


def test_example_choices(read_models: Any, org_id: Any) -> list[tuple[str, str]]:
    choices = [(f"benchmark:{name}", label) for name, label in BENCHMARKS.items()]
    for version in read_models.dataset_versions(org_id):
        if not version.archived and version.split_counts.get("test"):
            choices.append((f"version:{version.id}", f"{version.label} · {version.split_counts['test']:,} test"))
    return choices


def _page(read_models: Any, identity: Identity, values: dict[str, str], errors: dict[str, str],
          status_code: int = 200) -> Template:
    context = {
        "section": "evaluations", "identity": identity, "values": values, "errors": errors,
        "projects": read_models.projects(identity.organization_id),
        "sources": test_example_choices(read_models, identity.organization_id), "metrics": metric_choices(),
    }
    return Template("evaluations/new.html", context=context, status_code=status_code)


def source_of_form(value: str, count: str) -> dict[str, Any]:
    kind, _, name = value.partition(":")
    if kind == "benchmark":
        return {"kind": "benchmark", "name": name, "count": int(count) if count.isdigit() else count}
    return {"kind": "dataset_version", "id": name}


class NewEvaluationPageController(Controller):
    path = "/evaluations/new"
    include_in_schema = False

    @get("/", name="evaluations:new", sync_to_thread=True)
    def form(self, read_models: ReadModelsDep, identity: Identity) -> Template:
        values = {"name": "Baseline", "source": MATH_PAIRS_SOURCE, "count": "64", "metric": "verifiable:math_pairs",
                  "max_answer_tokens": "64"}
        return _page(read_models, identity, values, {})

    @post("/", name="evaluations:create", sync_to_thread=True)
    def create(self, request: Request, data: Annotated[dict[str, str], FORM], verity: Verity,
               read_models: ReadModelsDep, own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        preset, _, metric = data.get("metric", "").partition(":")
        tokens = data.get("max_answer_tokens", "")
        try:
            written = verity.create_evaluation(
                identity.organization_id, UUID(data.get("project", "")), name=data.get("name", ""),
                source=source_of_form(data.get("source", ""), data.get("count", "64")), scoring={"preset": preset},
                main_metric=metric, actor=identity.actor,
                max_answer_tokens=int(tokens) if tokens.isdigit() else tokens,  # type: ignore[arg-type]
            )
        except ValueError:
            return _page(read_models, identity, data, {"project": "Choose a project."}, 400)
        except SettingsInvalid as problem:
            return _page(read_models, identity, data, problem.errors, 400)
        own_writes.see(written.position)
        send_evaluation(request, written.id)
        return Redirect(path=f"/evaluations/{written.id}", status_code=303)
