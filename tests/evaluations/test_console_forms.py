"""The console's forms for evaluations, loops and the experiment page, over a real SQLite store and read models
(no jobs: what is created stays Queued)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import pytest
from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from domain.actors import Actor
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models, ensure_default_organization

OWNER = Actor("person", "owner@localhost", "owner@localhost")


@pytest.fixture(scope="module")
def console(tmp_path_factory) -> Iterator[Any]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("verity-forms"))
    verity = build_application(settings)
    read_models = build_read_models(settings)
    org_id, project_id = ensure_default_organization(settings, verity, read_models)
    runner = ProjectionRunner(verity, read_models)
    runner.run_once()
    with TestClient(create_app(verity, read_models, runner=runner, debug=True)) as client:
        sign_in_as(client, verity, read_models, org_id)
        client.project_id = project_id  # type: ignore[attr-defined]
        client.verity = verity  # type: ignore[attr-defined]
        client.org_id = org_id  # type: ignore[attr-defined]
        client.read_models = read_models  # type: ignore[attr-defined]
        yield client


def test_new_evaluation_form_starts_an_evaluation_of_the_base_model(console):
    form = console.get("/evaluations/new")
    assert form.status_code == 200 and "Test examples" in form.text and "Main metric" in form.text
    answer = console.post("/evaluations/new", data={
        "name": "Baseline", "project": str(console.project_id), "source": "benchmark:math_pairs_held_out",
        "count": "16", "metric": "verifiable:math_pairs", "max_answer_tokens": "16"}, follow_redirects=True)
    assert answer.status_code == 200 and "Baseline" in answer.text and "Queued" in answer.text
    refused = console.post("/evaluations/new", data={
        "name": "x", "project": str(console.project_id), "source": "benchmark:math_pairs_held_out", "count": "16",
        "metric": "verifiable:math_pairs", "max_answer_tokens": "0"})
    assert refused.status_code == 400 and "Longest answer (tokens) must be a whole number" in refused.text


def test_start_an_automated_loop_form_has_001s_fields_and_starts_a_loop(console):
    form = console.get("/loops/new").text
    for label in ("Name", "Benchmark", "Score Column", "Target", "Max Rounds", "Give Up After",
                  "Reclaim storage between rounds", "usually reclaims nothing"):
        assert label in form
    answer = console.post("/loops/new", data={
        "name": "math-pairs to 35%", "project": str(console.project_id), "benchmark": "math_pairs_held_out",
        "score_column": "accuracy", "target": "35", "max_rounds": "8", "give_up_after": "2",
        "reclaim_storage": "on", "rounds": "2", "prompts_per_round": "8", "answers_per_prompt": "4",
        "max_answer_tokens": "16", "learning_rate": "0.0005", "benchmark_size": "16"}, follow_redirects=True)
    assert answer.status_code == 200 and "math-pairs to 35%" in answer.text and "0 of 8" in answer.text
    refused = console.post("/loops/new", data={
        "name": "", "project": str(console.project_id), "benchmark": "math_pairs_held_out",
        "score_column": "accuracy", "target": "135", "max_rounds": "8", "give_up_after": "2", "rounds": "2",
        "prompts_per_round": "8", "answers_per_prompt": "4", "max_answer_tokens": "16",
        "learning_rate": "0.0005", "benchmark_size": "16"})
    assert refused.status_code == 400 and "Target must be a percent from 0 to 100." in refused.text


def test_an_experiment_page_shows_the_reward_and_the_api_creates_one(console):
    created = console.post("/api/experiments", json={
        "project_id": str(console.project_id), "name": "RL on math",
        "source": {"kind": "benchmark", "name": "math_pairs_held_out", "count": 16},
        "scoring": {"preset": "verifiable", "format_bonus": True}, "main_metric": "math_pairs",
        "rl": {"rounds": 1, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16}})
    assert created.status_code == 201, created.text
    judge = console.post("/api/experiments", json={
        "project_id": str(console.project_id), "name": "judged",
        "source": {"kind": "benchmark", "name": "math_pairs_held_out", "count": 16},
        "scoring": {"preset": "qa"}, "main_metric": "llm_judge"})
    assert judge.status_code == 422 and "Choose a reward for RL" in judge.text
    experiment_id = created.json()["id"]
    page = console.get(f"/experiments/{experiment_id}")
    assert page.status_code == 200 and "main metric (Math Pairs" in page.text and "Queued" in page.text
    assert "RL on math" in console.get("/experiments").text


def test_configure_offers_completed_baselines_and_the_reward_taken_from_one(console):
    v = console.verity
    baseline_id = v.create_evaluation(
        console.org_id, console.project_id, name="Base on pairs",
        source={"kind": "benchmark", "name": "math_pairs_held_out", "count": 8},
        scoring={"preset": "verifiable", "format_bonus": True}, main_metric="math_pairs", actor=OWNER).id
    v.record_evaluation_started(baseline_id)
    written = v.record_evaluation_completed(baseline_id, 0.4, {"score": 0.4}, [])
    console.read_models.wait_for(written.position, timeout=10)
    form = console.get("/runs/new").text
    assert "Baseline" in form and f'value="{baseline_id}"' in form and "Taken from the baseline" in form

    # another version's baseline is not offered; changing the Dataset version redraws the select
    on_a_version = console.post("/runs/summary", data={"project": str(console.project_id), "kind": "full",
                                                       "dataset_version": str(uuid4())},
                                headers={"HX-Request": "true"}).text
    assert 'id="field-baseline" hx-swap-oob="true"' in on_a_version and str(baseline_id) not in on_a_version
    assert 'id="field-start_run" hx-swap-oob="true"' in on_a_version  # Start from follows project and revision

    # Save with that baseline and "Taken from the baseline": the run's reward is the baseline's
    chosen = {"name": "from the baseline", "project": str(console.project_id), "kind": "full",
              "baseline": str(baseline_id), "reward_preset": "", "rounds": "2"}
    summary = console.post("/runs/summary", data=chosen,
                           headers={"HX-Request": "true", "HX-Trigger-Name": "baseline"}).text.replace("&#39;", "'")
    assert f'<option value="{baseline_id}" selected>' in summary
    taken = "Taken from the baseline's scoring and main metric. Change a field to train toward another reward."
    assert taken in summary
    saved = console.post("/runs", data=chosen, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    run = v.get_run(console.org_id, UUID(saved.headers["location"].rsplit("/", 1)[-1]))
    assert run.settings["baseline"] == str(baseline_id)
    assert run.settings["training"]["rl"]["reward"] == v.baseline_reward(console.org_id, baseline_id)
