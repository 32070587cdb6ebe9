"""The console as a service: /healthz and /readyz answer a probe with no account, /readyz goes down when the
PostgreSQL database stops taking connections (and up again after) or the projections fall behind, and /-/metrics
gives Prometheus the requests by route and the console's figures, behind a token when one is set."""

from __future__ import annotations

import time
from collections.abc import Iterator
from uuid import UUID

import psycopg
import pytest
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.factory import create_app
from domain.actors import Actor
from domain.runs.progress import RoundResult
from domain.runs.settings import run_body_from_api
from migrations import apply_migrations
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

POSTGRES_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"
OWNER = Actor("person", "owner@localhost", "owner@localhost")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}


def _console(settings: Settings, *, follow: bool = True) -> Iterator[tuple[TestClient, object, object]]:
    apply_migrations(settings)
    verity = build_application(settings)
    read_models = build_read_models(settings, migrate=False)
    ensure_default_organization(settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    app = create_app(verity, read_models, runner=runner if follow else None)
    with TestClient(app) as client:
        yield client, verity, read_models


@pytest.fixture
def console(sqlite_settings: Settings) -> Iterator[tuple[TestClient, object, object]]:
    yield from _console(sqlite_settings)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_healthz_and_readyz_answer_a_probe_with_no_account(console) -> None:
    client, _, _ = console
    assert client.get("/healthz").json() == {"status": "up"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "projection_lag": 0,
                            "checks": {"event_store": "ok", "read_models": "ok", "projections": "ok"}}
    assert client.get("/api/runs").status_code == 401  # the rest still asks who is there


def test_readyz_is_down_while_the_projections_trail_the_event_log_by_more_than_allowed(
    sqlite_settings: Settings, monkeypatch
) -> None:
    for client, verity, _ in _console(sqlite_settings, follow=False):
        org_id, project_id = ensure_default_organization(sqlite_settings, verity)
        for number in range(3):  # recorded, never projected: no runner follows the log here
            draft = run_body_from_api({"name": f"run {number}", "training": {"rl": {"reward": MATH_PAIRS}}})
            verity.save_run(org_id, project_id, draft, OWNER)
        monkeypatch.setenv("VERITY_READY_MAX_LAG", "2")
        answer = client.get("/readyz")
        assert answer.status_code == 503
        assert answer.json()["projection_lag"] == 3
        assert answer.json()["checks"]["projections"] == "3 events behind the event log (at most 2)"
        metrics = samples(client.get("/-/metrics").text)
        assert metrics[("verity_projection_lag_events", ())] == 3
        assert metrics[("verity_projection_lag_seconds", ())] >= 0
        monkeypatch.setenv("VERITY_READY_MAX_LAG", "3")
        assert client.get("/readyz").status_code == 200


def test_readyz_is_down_while_postgresql_refuses_connections_and_up_again_after(tmp_path, postgres) -> None:
    settings = Settings(data_dir=tmp_path / "data", postgres=postgres)
    for client, _, _ in _console(settings):
        assert client.get("/readyz").status_code == 200
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{postgres.dbname}" ALLOW_CONNECTIONS false')
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                          (postgres.dbname,))
        try:
            answer = client.get("/readyz")
            assert answer.status_code == 503
            checks = answer.json()["checks"]
            assert checks["event_store"] != "ok" and checks["read_models"] != "ok", checks
            assert client.get("/healthz").status_code == 200  # the process itself is up
        finally:
            with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{postgres.dbname}" ALLOW_CONNECTIONS true')
        deadline = time.monotonic() + 15
        while client.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, client.get("/readyz").json()
            time.sleep(0.3)


def test_the_metrics_count_requests_by_route_runs_by_state_and_the_rounds_phases(console) -> None:
    client, verity, read_models = console
    org_id = read_models.organizations()[0].id
    project_id = read_models.projects(org_id)[0].id
    draft = run_body_from_api({"training": {"rl": {"rounds": 2, "reward": MATH_PAIRS}}})
    run_id = verity.save_run(org_id, project_id, draft, OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "owner")
    verity.record_preparing(run_id)
    # round 1 graded by a custom metric's sandbox: 2 answers failed with their batch (execution), 3 batches scored;
    # round 2 was recorded before failures were counted by kind
    for number in range(3):
        verity.record_round_scored(run_id, RoundResult(
            round_number=number, validation_reward=0.3, reward=0.4 if number else None, signal=0.5, updated=True,
            metric_failures=2 if number else 0, sampling_seconds=1.5 * bool(number), grading_seconds=0.25,
            update_seconds=2.0 * bool(number), validation_seconds=0.5,
            failures_by_kind={"execution": 2} if number == 1 else None,
            sandbox_batches={"scored": 3, "execution": 1} if number == 1 else None,
        ))
    read_models.wait_for(verity.recorder.max_notification_id(), timeout=10)
    client.get(f"/runs/{run_id}")  # asks for sign-in: a request like any other
    client.get(f"/runs/{UUID(int=7)}")

    metrics = samples(client.get("/-/metrics").text)

    assert metrics[("verity_runs", (("state", "training"),))] == 1
    assert metrics[("verity_rounds_finished_total", ())] == 2
    assert metrics[("verity_round_phase_seconds_total", (("phase", "sampling"),))] == 3.0
    assert metrics[("verity_round_phase_seconds_total", (("phase", "grading"),))] == 0.75
    assert metrics[("verity_round_phase_seconds_total", (("phase", "update"),))] == 4.0
    assert metrics[("verity_round_phase_seconds_total", (("phase", "validation"),))] == 1.5
    failures = {dict(labels)["kind"]: value for (name, labels), value in metrics.items()
                if name == "verity_metric_failures_total"}
    assert failures == {"execution": 2, "result": 0, "timeout": 0, "memory": 0, "output": 0, "unknown": 2}
    batches = {dict(labels)["outcome"]: value for (name, labels), value in metrics.items()
               if name == "verity_sandbox_batches_total"}
    assert batches == {"scored": 3, "execution": 1, "result": 0, "timeout": 0, "memory": 0, "output": 0}
    assert metrics[("verity_projection_lag_events", ())] == 0
    # one route, whichever run: the route's template labels the requests, not each run's id
    route = [key for key in metrics if key[0] == "verity_http_requests_total" and ("path", "/runs/{run_id}")
             in key[1]]
    assert route and sum(metrics[key] for key in route) >= 2
    assert not any(str(run_id) in name for name, _ in metrics)
    assert any(key[0] == "verity_http_request_duration_seconds_bucket" for key in metrics)


def test_a_metrics_token_keeps_the_scrape_to_whoever_holds_it(console, monkeypatch) -> None:
    client, _, _ = console
    monkeypatch.setenv("VERITY_METRICS_TOKEN", "scrape-secret")
    refused = client.get("/-/metrics")
    assert refused.status_code == 401 and "VERITY_METRICS_TOKEN" in refused.text
    assert client.get("/-/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/-/metrics", headers={"Authorization": "Bearer scrape-secret"}).status_code == 200
