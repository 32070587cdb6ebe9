"""A person configures a run in the browser, launches it, and follows it while the trainer reports rounds."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from uuid import UUID

from domain.runs.run_settings import FIELDS

if TYPE_CHECKING:
    from conftest import Console

HTMX = {"HX-Request": "true"}
FORM = {
    "name": "first try",
    "kind": "full",
    "rounds": "3",
    "reward_preset": "verifiable",
    "reward_metric": "math_pairs",
    "reward_synthetic_prompts": "64",
    "reward_format_bonus": "on",
}


def save_from_form(console: Console, **changes: str) -> UUID:
    saved = console.client.post("/runs", data={**FORM, **changes}, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    return UUID(saved.headers["location"].rsplit("/", 1)[-1])


def test_the_configure_form_shows_every_setting_with_its_default_and_locked_fields(console: Console) -> None:
    page = console.client.get("/runs/new")
    assert page.status_code == 200
    html = page.text
    for spec in FIELDS:
        if spec.name != "reward":
            assert f'name="{spec.name}"' in html, spec.name
            assert spec.label in html
    # the Demo project's own numbers for the tiny model (the product's 20 rounds and 5e-6 are for real models)
    assert re.search(r'name="rounds" value="40"', html)
    assert re.search(r'name="learning_rate" value="0.0005"', html)
    assert re.search(r'name="max_answer_tokens" value="16"', html)
    for section in ("Training objective", "Run", "Reinforcement learning", "Reward", "Advanced settings"):
        assert f"<legend>{section}</legend>" in html
    assert 'Training method <span class="lock">locked</span>' in html
    assert 'value="LoRA" readonly' in html
    assert "Training Summary" in html and "Saving a run never starts a GPU." in html


def test_a_run_saved_from_the_form_opens_as_a_draft_with_its_launch_confirmation(console: Console) -> None:
    run_id = save_from_form(console, kind="trial", trial_minutes="15")
    page = console.client.get(f"/runs/{run_id}").text
    assert "first try" in page and "Draft" in page
    assert "A trial: one round on up to 8 prompts and 15 minutes, then the GPU is released." in page
    assert 'hx-trigger="every 2s"' not in page  # a draft does not change by itself

    listed = console.client.get("/runs").text
    assert f"/runs/{run_id}" in listed and "badge-draft" in listed


def test_an_invalid_setting_is_shown_under_its_field_and_records_nothing(console: Console) -> None:
    before = console.feed_position()
    refused = console.client.post("/runs", data={**FORM, "rounds": "0", "learning_rate": "lots"})
    assert refused.status_code == 422
    html = refused.text
    assert re.search(r'id="error-rounds"[^>]*>Rounds must be a whole number from 1 to 1,000\.</p>', html)
    learning_rate = r'id="error-learning_rate"[^>]*>Learning rate must be a number from 1e-7 to 1e-3\.</p>'
    assert re.search(learning_rate, html)
    assert 'name="learning_rate" value="lots"' in html  # what was typed stays
    assert console.feed_position() == before


def test_the_training_summary_follows_the_form_and_places_each_message(console: Console) -> None:
    answer = console.client.post(
        "/runs/summary",
        data={**FORM, "answers_per_prompt": "8", "micro_batch_size": "6", "rounds": "x"},
        headers={**HTMX, "HX-Trigger-Name": "rounds"},
    )
    assert answer.status_code == 200
    html = answer.text
    assert html.lstrip().startswith('<aside class="card sidebar" id="training-summary"')
    assert "Math Pairs · Verifiable" in html
    assert "Micro batch size (6) should be a multiple of Answers per prompt (8)" in html
    assert re.search(r'id="error-rounds"[^>]*hx-swap-oob="true">Rounds must be a whole number', html)
    assert 'id="section-reward"' not in html
    trial = console.client.post("/runs/summary", data={**FORM, "kind": "trial"}, headers=HTMX).text
    assert re.search(r'id="save-button"[^>]*hx-swap-oob="true">Save trial draft</button>', trial)
    assert "A trial: one round on up to 8 prompts and 20 minutes, then the GPU is released." in trial

    preset_changed = console.client.post(
        "/runs/summary",
        data={**FORM, "reward_preset": "classification", "reward_metric": "accuracy"},
        headers={**HTMX, "HX-Trigger-Name": "reward_preset"},
    ).text
    assert 'id="section-reward" hx-swap-oob="true"' in preset_changed
    assert 'name="reward_labels"' in preset_changed
    assert "Classification needs Allowed labels" in preset_changed


def test_the_run_page_follows_a_live_run_and_stops_polling_once_it_ends(console: Console) -> None:
    run_id = save_from_form(console)
    launched = console.client.post(f"/runs/{run_id}/launch", follow_redirects=False)
    assert launched.status_code == 303 and console.launched == [run_id]
    console.verity.record_preparing(run_id)
    console.score_round(run_id, 0, None, 0.30)
    console.score_round(run_id, 1, 0.41, 0.47)
    console.settle()

    page = console.client.get(f"/runs/{run_id}").text
    assert "<html" in page and "Training · round 2 / 3" in page
    # status line, reward, RL metrics, rounds, samples, training logs, summary
    assert page.count('hx-trigger="every 2s"') == 7
    assert "Round 1 of 3: reward 0.4100, signal 62%, cut off 2%, 0 metric failures, updated" in page

    rounds = console.client.get(f"/runs/{run_id}/rounds", headers=HTMX)
    assert "<html" not in rounds.text
    assert rounds.text.lstrip().startswith('<section id="run-rounds"')
    assert 'hx-trigger="every 2s"' in rounds.text
    assert re.findall(r"<tr[^>]*>\s*<td class=\"num\">(\d+)", rounds.text) == ["1", "0"]  # newest first

    console.score_round(run_id, 2, 0.45, 0.44)
    console.score_round(run_id, 3, 0.52, 0.51)
    console.verity.record_saving_adapter(run_id)
    console.verity.record_adapter_ready(run_id, 3, f"runs/{run_id}/adapter", "ab" * 32, 1024)
    console.verity.record_completed(run_id)
    console.settle()

    for part in ("status", "summary", "reward", "metrics", "rounds", "samples", "logs", "timeline"):
        fragment = console.client.get(f"/runs/{run_id}/{part}", headers=HTMX).text
        assert "<html" not in fragment
        assert "hx-trigger" not in fragment.split(">", 1)[0], part  # the part's root no longer polls
    status = console.client.get(f"/runs/{run_id}/status", headers=HTMX).text
    assert "Completed" in status
    final = console.client.get(f"/runs/{run_id}").text
    assert 'hx-trigger="every 2s"' not in final
    assert re.findall(r"<tr[^>]*>\s*<td class=\"num\">(\d+)", final) == ["3", "2", "1", "0"]


def test_the_timeline_tab_tells_who_did_what(console: Console) -> None:
    run_id = save_from_form(console)
    console.client.post(f"/runs/{run_id}/launch")
    console.client.post(f"/runs/{run_id}/cancel")
    page = console.client.get(f"/runs/{run_id}/timeline").text
    assert "<html" in page and 'aria-selected="true"' in page
    timeline = console.read_models.timeline(console.org_id, run_id)
    assert len(timeline) == 3
    for entry in timeline:
        assert entry.sentence in page
    assert "owner@localhost" in page
    tab = console.client.get(f"/runs/{run_id}/timeline", headers=HTMX).text
    assert tab.lstrip().startswith('<div id="tab-panel"') and "<html" not in tab


def test_refusals_on_the_run_page_speak_the_users_words(console: Console) -> None:
    run_id = save_from_form(console)
    not_running = console.client.post(f"/runs/{run_id}/cancel")
    assert not_running.status_code == 409
    assert "Only a queued or running run can be cancelled: this run is Draft." in not_running.text
    assert console.client.get("/runs/00000000-0000-0000-0000-000000000000").status_code == 404
