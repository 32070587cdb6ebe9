"""Two organizations on one console: "Default" (ours: an owner, a member, a viewer) and "Other" (a stranger's,
with a run, a dataset, a custom metric, a member, a token and a provider whose ids the tests try to reach)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from uuid import UUID, uuid4

import pytest
from litestar.testing import TestClient
from probe_summaries import summary as probe_summary

from app.auth.config import AuthConfig
from app.auth.testing import TESTS, bearer_headers, ensure_member, sign_in_as
from app.factory import create_app
from domain.application import Verity
from domain.custom_metrics import CustomMetric
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner
from projections.store import ReadModels
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64, "format_bonus": True}
STRANGER_RUN = "the stranger's secret run"
STRANGER_EMAIL = "stranger@other.example"
METRIC_SOURCE = "def score(answers, references):\n    return [1.0 for _ in answers]\n"


def rl_body(name: str = "ours", **rl: object) -> dict:
    return {
        "name": name,
        "training": {"objective": "rl", "method": "lora", "gpu_count": 1, "rl": {"reward": MATH_PAIRS, **rl}},
    }


@dataclass
class Site:
    app: object
    verity: Verity
    read_models: ReadModels
    runner: ProjectionRunner
    org_id: UUID
    project_id: UUID
    other_org_id: UUID
    other_ids: dict[str, str] = field(default_factory=dict)  # path parameter name → a real id of "Other"
    # The clients' lifespans, shut at the test's end: each started the app's projection runner, which would follow
    # the log beside every later test of the session.
    clients_open: ExitStack = field(default_factory=ExitStack)

    def settle(self) -> None:
        self.runner.run_once()
        assert self.read_models.wait_for(self.verity.recorder.max_notification_id() or 0, timeout=10)

    def client(self, role: str | None = None, *, email: str | None = None) -> TestClient:
        """A new client: anonymous (None), or signed in to Default with that role."""
        client = self.clients_open.enter_context(TestClient(self.app))
        if role is not None:
            sign_in_as(
                client, self.verity, self.read_models, self.org_id, email=email or f"{role}@ours.example", role=role
            )
        return client

    def token_client(self, role: str, org_id: UUID | None = None) -> TestClient:
        client = self.clients_open.enter_context(TestClient(self.app))
        client.headers.update(bearer_headers(self.verity, org_id or self.org_id, role))
        return client


def _the_strangers_objects(verity: Verity, org_id: UUID) -> dict[str, str]:
    project = verity.create_project(org_id, "Theirs", "some/model", None, False, TESTS).id
    run = verity.save_run(org_id, project, run_body_from_api(rl_body(STRANGER_RUN)), TESTS).id
    ensure_member(verity, _NoWait(), org_id, STRANGER_EMAIL, "owner")
    ids = {
        "run_id": str(run),
        "account_id": str(verity.find_account(STRANGER_EMAIL).id),
        "token_id": str(verity.issue_token(org_id, "their token", "owner", TESTS, "owner").id),
        "provider": "their-gpus",
        "file_path": "console.css",
        "path": "openapi.json",
    }
    verity.set_provider(org_id, "their-gpus", "H100", 3.0, TESTS, "owner")
    dataset = verity.create_dataset(org_id, "their data", TESTS).id
    held_out = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
    ids["evaluation_id"] = str(verity.create_evaluation(
        org_id, project, name="theirs", source=held_out, scoring={"preset": "verifiable"}, main_metric="math_pairs",
        actor=TESTS).id)
    ids["loop_id"] = str(verity.create_loop(
        org_id, project, name="theirs", benchmark="math_pairs_held_out", score_column="accuracy", target_percent=50,
        max_rounds=2, give_up_after=1, reclaim_storage=True, draft=run_body_from_api(rl_body(STRANGER_RUN)),
        actor=TESTS, role="owner").id)
    ids["experiment_id"] = str(verity.create_experiment(
        org_id, project, name="theirs", actor=TESTS, role="owner", source=held_out,
        scoring={"preset": "verifiable"}, main_metric="math_pairs").id)
    ids["dataset_id"] = str(dataset)
    ids["probe_id"] = str(verity.create_probe(
        org_id, project, name="theirs", source={"kind": "math_pairs"},
        reward={"preset": "numeric", "metric": "numeric_accuracy"}, actor=TESTS, role="owner").id)
    scored_probe = verity.create_probe(
        org_id, project, name="theirs, scored", source={"kind": "math_pairs"},
        reward={"preset": "numeric", "metric": "numeric_accuracy"}, actor=TESTS, role="owner").id
    verity.record_probe_sampling(scored_probe)
    verity.record_probe_scored(scored_probe, {**probe_summary(scored_probe, [True, False]), "answers_per_prompt": 8,
                                              "answers": 16, "graded": 16,
                                              "histogram": [14, 0, 0, 0, 0, 0, 0, 0, 0, 2]})
    ids["rescoring_id"] = str(verity.create_rescoring(
        org_id, source={"kind": "probe", "id": str(scored_probe)},
        reward={"preset": "qa", "metric": "exact_match"}, actor=TESTS, role="owner").id)
    ids["line"] = "0"
    ids["prompt_index"] = "0"  # the run page's Prompts tab: an opened prompt
    try:
        ids["version_id"] = str(verity.register_custom_metric(org_id, "their_metric", METRIC_SOURCE, TESTS).id)
        ids["metric_id"] = str(CustomMetric.create_id(org_id, "their_metric"))
    except Exception:
        ids.setdefault("metric_id", str(uuid4()))
        ids.setdefault("version_id", str(uuid4()))
    return ids


class _NoWait:
    def wait_for(self, position: int, timeout: float = 5.0) -> bool:
        return True


@pytest.fixture
def site(sqlite_settings: Settings) -> Iterator[Site]:
    verity = build_application(sqlite_settings)
    read_models = build_read_models(sqlite_settings)
    org_id, project_id = ensure_default_organization(sqlite_settings, verity, read_models)
    other = verity.create_organization("Other", "pro", TESTS).id
    ids = _the_strangers_objects(verity, other)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    app = create_app(verity, read_models, runner=runner, auth=AuthConfig(sign_in_attempts_per_minute=1000), debug=False)
    site = Site(app, verity, read_models, runner, org_id, project_id, other, ids)
    with site.clients_open:
        yield site
