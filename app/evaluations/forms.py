"""The console's New evaluation form: the base model (or a finished run's adapter) on a dataset version's test
examples or the Math Pairs held-out benchmark, with a kind of answers and a main metric."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any
from uuid import UUID

from litestar import Controller, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Template

from app.runs.configure import reward_of_form, start_from_choices
from app.runs.form import SETTINGS_OF_PRESET, FormField, RunForm
from app.shell.dependencies import OwnWritesDep, ReadModelsDep
from app.shell.identity import Identity
from domain.access.roles import CHANGE
from domain.application import Verity
from domain.errors import SettingsInvalid
from domain.evaluations.benchmarks import BENCHMARKS
from domain.rewards.config import METRICS, NOT_A_REWARD, PRESET_NAMES

FORM = Body(media_type=RequestEncodingType.URL_ENCODED)
MATH_PAIRS_SOURCE = "benchmark:math_pairs_held_out"
CHOOSE_WHAT_IS_EVALUATED = "Choose what is evaluated: the base model, or a finished run's adapter."
# The reward settings an evaluation's scoring takes from its form (a verifiable task's are the run's own).
SCORING_SETTINGS = tuple(key for preset in ("classification", "structured_json", "numeric")
                         for key in SETTINGS_OF_PRESET[preset])


def evaluation_metric_choices() -> list[tuple[str, str]]:
    """The New evaluation form's: the built-in metrics, each with the settings it needs on the form. The LLM judge
    and RadEval need a judge model, which this installation does not configure, so they are not offered."""
    return [(f"{preset}:{metric}", f"{name} · {PRESET_NAMES[preset]}")
            for preset, metrics in METRICS.items() for metric, name in metrics.items()]


def scoring_fields(values: Mapping[str, str], errors: Mapping[str, str]) -> list[FormField]:
    """The settings the chosen metric needs (Allowed labels, JSON schema and Fields to compare, or Absolute and
    Relative tolerance), as the Configure form's Reward section defines and draws them; each with its message."""
    preset, _, metric = values.get("metric", "").partition(":")
    form = RunForm(values={**values, "reward_preset": preset, "reward_metric": metric}, errors=errors)
    return [f for f in form.section("Reward") if f.name.removeprefix("reward_") in SCORING_SETTINGS]


def scoring_of_form(values: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """The scoring (the kind of answers and its settings, read as the Configure form reads a reward) and the main
    metric; the domain checks both when the evaluation is created."""
    preset, _, metric = values.get("metric", "").partition(":")
    settings = {k: v for k, v in values.items() if k.removeprefix("reward_") in SCORING_SETTINGS}
    reward = reward_of_form({**settings, "reward_preset": preset, "reward_metric": metric})
    return {"preset": preset, **{k: v for k, v in reward.items() if k in SCORING_SETTINGS}}, metric


def _field_errors(errors: Mapping[str, str]) -> dict[str, str]:
    """The domain names a setting's message "scoring.labels"; the form's field is reward_labels."""
    return {f"reward_{key.removeprefix('scoring.')}" if key.startswith("scoring.") else key: message
            for key, message in errors.items()}


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
    errors = _field_errors(errors)
    context = {
        "section": "evaluations", "identity": identity, "values": values, "errors": errors,
        "projects": read_models.projects(identity.organization_id),
        "sources": test_example_choices(read_models, identity.organization_id), "metrics": evaluation_metric_choices(),
        "adapters": start_from_choices(read_models, identity, values),  # what is evaluated, beside the base model
        "scoring_fields": scoring_fields(values, errors),
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

    @post("/settings", name="evaluations:settings", sync_to_thread=True)
    def settings(self, data: Annotated[dict[str, str], FORM]) -> Template:
        """The chosen metric's settings, redrawn by htmx when Main metric changes."""
        context = {"scoring_fields": scoring_fields(data, {})}
        return Template("evaluations/scoring_settings.html", context=context)

    @post("/", name="evaluations:create", sync_to_thread=True)
    def create(self, data: Annotated[dict[str, str], FORM], verity: Verity,
               read_models: ReadModelsDep, own_writes: OwnWritesDep, identity: Identity) -> Template | Redirect:
        if (refused_role := identity.refusal(CHANGE)) is not None:  # the form again, as typed, with why not
            return _page(read_models, identity, data, {"": refused_role}, 403)
        scoring, metric = scoring_of_form(data)
        tokens = data.get("max_answer_tokens", "")
        try:
            adapter_run = UUID(data["adapter_run"]) if data.get("adapter_run") else None
        except ValueError:
            return _page(read_models, identity, data, {"adapter_run": CHOOSE_WHAT_IS_EVALUATED}, 400)
        try:
            written = verity.create_evaluation(
                identity.organization_id, UUID(data.get("project", "")), name=data.get("name", ""),
                source=source_of_form(data.get("source", ""), data.get("count", "64")), scoring=scoring,
                main_metric=metric, actor=identity.actor, adapter_run=adapter_run,
                max_answer_tokens=int(tokens) if tokens.isdigit() else tokens,  # type: ignore[arg-type]
            )
        except ValueError:
            return _page(read_models, identity, data, {"project": "Choose a project."}, 400)
        except SettingsInvalid as problem:
            return _page(read_models, identity, data, problem.errors, 400)
        own_writes.see(written.position)  # the jobs evaluate it, as the event log tells them
        return Redirect(path=f"/evaluations/{written.id}", status_code=303)
