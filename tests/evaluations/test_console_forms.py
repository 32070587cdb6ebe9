"""The console's forms for evaluations, loops and the experiment page, over a real SQLite store and read models
(no jobs: what is created stays Queued)."""

from __future__ import annotations

import html
import re
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


def test_a_loop_started_as_the_form_shows_it_trains_with_the_projects_own_numbers(console):
    values = _form_values(console.get("/loops/new").text)
    assert (values["rounds"], values["prompts_per_round"], values["max_answer_tokens"]) == ("40", "16", "16")
    values.update(name="as the form starts", rounds="3")
    created = console.post("/loops/new", data=values, follow_redirects=False)
    assert created.status_code == 303, created.text
    loop = console.verity.get_loop(console.org_id, UUID(created.headers["location"].rsplit("/", 1)[-1]))
    training = loop.run_settings
    assert training.rounds == 3 and training.learning_rate == 0.0005  # as typed
    # what the form does not show comes from the Demo project too, not from the product's GPU-sized defaults
    assert (training.micro_batch_size, training.training_window) == (64, 256)


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
    assert run.settings.baseline == str(baseline_id)
    assert run.settings.reward == v.baseline_reward(console.org_id, baseline_id)


# --- New experiment ------------------------------------------------------------------------------------------------
def _form_values(html: str) -> dict[str, str]:
    """What a browser would submit from the page as drawn: every input's value and every select's choice."""
    values = dict(re.findall(r'<input[^>]*\bname="(\w+)"[^>]*\bvalue="([^"]*)"', html))
    for name, options in re.findall(r'<select[^>]*\bname="(\w+)"[^>]*>(.*?)</select>', html, re.S):
        chosen = re.findall(r'<option value="([^"]*)"\s*selected', options) or re.findall(r'value="([^"]*)"', options)
        values[name] = chosen[0] if chosen else ""
    for name in re.findall(r'<input type="checkbox"[^>]*\bname="(\w+)"(?![^>]*checked)', html):
        values.pop(name, None)  # a browser leaves an unchecked box out
    values.pop("_csrf_token", None)
    values.pop("compute_action", None)  # a button's value is sent only when it is clicked
    return values


def _compute(console, values: dict[str, str], **changes: str) -> str:
    answer = console.post("/experiments/new/compute", data={**values, **changes}, headers={"HX-Request": "true"})
    assert answer.status_code == 200, answer.text
    return html.unescape(answer.text)


def _experiments(console) -> int:
    return len(console.get("/experiments").text.split("/experiments/")) - 1


def test_new_experiment_form_starts_one_rewarded_by_the_evaluations_main_metric(console):
    page = console.get("/experiments/new")
    assert page.status_code == 200
    text = html.unescape(page.text)
    for words in ("Setup", "Compute", "RL · reinforcement learning (GRPO)", "Reuse an adapter · trains nothing",
                  "Reward: the evaluation's main metric (Math Pairs", "Choose another reward", "Advanced settings"):
        assert words in text, words
    # 000: Start from, Rounds, Prompts per round, Answers per prompt, Longest sampled answer: the first five
    compute = text[text.index('id="compute-step"'):]
    labels = re.findall(r'<label for="input-(\w+)"', compute)
    assert labels[:5] == ["start_run", "rounds", "prompts_per_round", "answers_per_prompt", "max_answer_tokens"]
    assert "learning_rate" in labels
    values = _form_values(page.text)
    assert values["rounds"] == "40" and values["max_answer_tokens"] == "16"  # the Demo project's own numbers
    values.update(name="Main metric in the form", rounds="1", prompts_per_round="8", answers_per_prompt="4")
    created = console.post("/experiments/new", data=values, follow_redirects=False)
    assert created.status_code == 303, created.text
    experiment_id = UUID(created.headers["location"].rsplit("/", 1)[-1])
    experiment = console.verity.get_experiment(console.org_id, experiment_id)
    assert experiment.reward_is_main_metric and experiment.reward["metric"] == "math_pairs" and experiment.trains
    assert experiment.run_settings.rounds == 1
    assert experiment.source == {"kind": "benchmark", "name": "math_pairs_held_out", "count": 64}
    shown = html.unescape(console.get(f"/experiments/{experiment_id}").text)
    assert "Reward: the evaluation's main metric (Math Pairs" in shown and "Queued" in shown


def test_choose_another_reward_then_go_back_to_the_main_metric(console):
    values = _form_values(console.get("/experiments/new").text)
    chosen = _compute(console, values, compute_action="choose")
    assert 'name="reward_preset"' in chosen and "Use the evaluation's main metric" in chosen
    assert "Choose another reward" not in chosen and 'name="chosen_reward" value="other"' in chosen
    # it starts from the main metric's kind of answers: Verifiable, Math Pairs
    assert re.search(r'<option value="verifiable"\s*selected>', chosen)
    assert "Reward: Math Pairs" in chosen
    back = _compute(console, {**values, **_form_values(chosen)}, compute_action="main")
    assert "Reward: the evaluation's main metric (Math Pairs" in back and 'name="reward_preset"' not in back

    # without the format bonus, the experiment trains toward that reward, not the main metric
    other = {**values, **_form_values(chosen), "name": "Another reward", "rounds": "1"}
    other.pop("reward_format_bonus")
    created = console.post("/experiments/new", data=other, follow_redirects=False)
    assert created.status_code == 303, created.text
    experiment = console.verity.get_experiment(console.org_id, UUID(created.headers["location"].rsplit("/", 1)[-1]))
    assert not experiment.reward_is_main_metric and experiment.reward["format_bonus"] is False
    shown = html.unescape(console.get(created.headers["location"]).text)
    assert "Reward: Math Pairs" in shown and "the evaluation's main metric" not in shown


def test_a_change_the_compute_step_does_not_depend_on_leaves_it_as_typed(console):
    values = _form_values(console.get("/experiments/new").text)
    for quiet in ("name", "count", "rounds", "learning_rate"):  # htmx keeps the step: nothing to redraw
        kept = console.post("/experiments/new/compute", data=values,
                            headers={"HX-Request": "true", "HX-Trigger-Name": quiet})
        assert kept.status_code == 204 and kept.content == b"", quiet
    # the main metric does change it: an LLM judge cannot be a reward
    redrawn = console.post("/experiments/new/compute", data={**values, "metric": "qa:llm_judge"},
                           headers={"HX-Request": "true", "HX-Trigger-Name": "metric"})
    assert redrawn.status_code == 200 and "data-asks-for-reward" in redrawn.text


def test_an_llm_judge_main_metric_makes_the_compute_step_ask_for_a_reward(console):
    values = {**_form_values(console.get("/experiments/new").text), "metric": "qa:llm_judge"}
    step = _compute(console, values)
    assert "The main metric, LLM judge · Q&A, can't be an RL reward." in step
    assert 'name="reward_preset"' in step and "Use the evaluation's main metric" not in step
    step = _compute(console, {**values, **_form_values(step), "reward_preset": "qa"})
    asked = {**values, **_form_values(step), "reward_metric": "token_f1", "name": "Judged, trained on F1"}
    created = console.post("/experiments/new", data=asked, follow_redirects=False)
    assert created.status_code == 303, created.text
    experiment = console.verity.get_experiment(console.org_id, UUID(created.headers["location"].rsplit("/", 1)[-1]))
    assert experiment.main_metric == "llm_judge" and experiment.reward["metric"] == "token_f1"


def test_a_refused_experiment_names_the_field_and_creates_nothing(console):
    values = _form_values(console.get("/experiments/new").text)
    before = _experiments(console)
    for changes, message in (
        ({"rounds": "0"}, "Rounds must be"),
        ({"evaluation_max_answer_tokens": "0"}, "Longest answer (tokens) must be a whole number from 1 to 16,384."),
        ({"name": " "}, "Name the experiment."),
        ({"count": "many"}, "A benchmark's problem count must be from 1 to 1,000."),
        ({"objective": "reuse", "reused_run": ""}, "Choose the finished run whose adapter the experiment reuses."),
    ):
        refused = console.post("/experiments/new", data={**values, **changes})
        assert refused.status_code == 400, (changes, refused.status_code)
        text = html.unescape(refused.text)
        assert message in text, (changes, text[text.find("field-error"):][:400])
        assert 'class="field invalid"' in text  # the message stands under its field
    assert _experiments(console) == before


def test_a_reused_baseline_fixes_the_evaluation_settings_and_the_default_reward(console):
    v = console.verity
    baseline_id = v.create_evaluation(
        console.org_id, console.project_id, name="Base without the bonus",
        source={"kind": "benchmark", "name": "math_pairs_held_out", "count": 8},
        scoring={"preset": "verifiable", "format_bonus": False}, main_metric="math_pairs", actor=OWNER,
        max_answer_tokens=12).id
    v.record_evaluation_started(baseline_id)
    console.read_models.wait_for(v.record_evaluation_completed(baseline_id, 0.3, {"score": 0.3}, []).position,
                                 timeout=10)
    page = console.get("/experiments/new").text
    assert f'<option value="{baseline_id}"' in page
    values = {**_form_values(page), "baseline": str(baseline_id), "metric": "qa:llm_judge", "count": "3"}
    step = _compute(console, values)
    assert "The reused baseline fixes the evaluation settings" in step
    assert "Reward: the evaluation's main metric (Math Pairs" in step  # the baseline's, not the form's judge
    created = console.post("/experiments/new", data={**values, "name": "On the baseline"}, follow_redirects=False)
    assert created.status_code == 303, created.text
    experiment = v.get_experiment(console.org_id, UUID(created.headers["location"].rsplit("/", 1)[-1]))
    assert experiment.baseline_id == baseline_id and experiment.max_answer_tokens == 12
    assert experiment.reward["format_bonus"] is False and experiment.source["count"] == 8


def test_on_the_free_plan_rl_is_refused_and_reusing_an_adapter_is_not(console):
    v = console.verity
    run_id = _finished_run(console)
    console.read_models.wait_for(v.set_plan(console.org_id, "free", OWNER).position, timeout=10)
    try:
        page = html.unescape(console.get("/experiments/new").text)
        assert "RL · reinforcement learning (GRPO) (Pro)" in page and "RL training is on the Pro plan." in page
        values = _form_values(page)
        before = _experiments(console)
        refused = console.post("/experiments/new", data=values)
        assert refused.status_code == 403
        assert "RL training is on the Pro plan. An owner can change the plan" in html.unescape(refused.text)
        assert _experiments(console) == before
        step = _compute(console, values, objective="reuse")
        assert "Reward: none, the experiment reuses an adapter and trains nothing" in step
        assert f'<option value="{run_id}"' in step and 'name="rounds"' not in step
        created = console.post("/experiments/new", data={**values, "objective": "reuse", "reused_run": str(run_id),
                                                         "name": "Reused"}, follow_redirects=False)
        assert created.status_code == 303, created.text
        experiment = v.get_experiment(console.org_id, UUID(created.headers["location"].rsplit("/", 1)[-1]))
        assert not experiment.trains and experiment.reused_run == run_id and experiment.reward is None
    finally:
        console.read_models.wait_for(v.set_plan(console.org_id, "pro", OWNER).position, timeout=10)


def _finished_run(console) -> UUID:
    """A finished full run with an adapter, its progress recorded as the jobs would."""
    from domain.runs.progress import RoundResult
    from domain.runs.settings import run_body_from_api

    v = console.verity
    body = {"name": "finished", "training": {"rl": {"rounds": 1, "reward": {
        "preset": "verifiable", "metric": "math_pairs", "format_bonus": True}}}}
    run_id = v.save_run(console.org_id, console.project_id, run_body_from_api(body), OWNER).id
    v.launch_run(console.org_id, run_id, OWNER, "owner")
    v.record_preparing(run_id)
    v.record_round_scored(run_id, RoundResult(0, 0.3, validation_seconds=1.0))
    v.record_round_scored(run_id, RoundResult(1, 0.4, reward=0.4, signal=0.5, cut_off=0.0, updated=True, loss=0.01,
                                              graded_answers=8))
    v.record_saving_adapter(run_id)
    console.read_models.wait_for(
        v.record_adapter_ready(run_id, 1, f"runs/{run_id}/adapter", "ab" * 32, 1234).position, timeout=10)
    return run_id


def test_the_api_refuses_an_id_that_is_not_one_under_its_field_and_creates_nothing(console):
    listed = console.get("/api/evaluations").json()
    for path, body, field in (
        ("/api/evaluations", {"project_id": "not-an-id", "name": "x"}, "project_id"),
        ("/api/evaluations", {"name": "x"}, "project_id"),
        ("/api/evaluations", {"against_baseline_of": "42"}, "against_baseline_of"),
        ("/api/experiments", {"project_id": str(console.project_id), "baseline_id": "nope"}, "baseline_id"),
    ):
        answer = console.post(path, json=body)
        assert answer.status_code == 422, (path, answer.text)
        assert answer.json()["errors"] == {field: f"{field} must be an ID."}, (path, answer.text)
    assert console.get("/api/evaluations").json() == listed
