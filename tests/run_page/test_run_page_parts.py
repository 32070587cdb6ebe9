"""The run page's parts through the test client, over SQLite, with rounds recorded as the jobs record them and
rollout files written where the trainer writes them."""

from __future__ import annotations

import csv
import io
import json
import re
from uuid import UUID

from run_parts import HTMX, MATH_PAIRS, OWNER, Page

from app.auth.testing import bearer_headers
from app.runs.view import ROUNDS_SHOWN
from domain.actors import Actor
from domain.runs.progress import TrialReport
from domain.runs.settings import run_body_from_api


def test_before_round_one_the_chart_says_so_and_round_zero_is_validation_only(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.31)
    page.settle()
    html = page.client.get(f"/runs/{run_id}").text
    assert "Rewards appear here once the trainer scores its first round." in html
    assert "Round 0, the starting adapter: validation 31.0%." in html
    assert "Time left (est.): <strong>estimated once the first round is scored</strong>" in html
    assert "Reward</dt>" in html and "Math Pairs" in html and "Starts from</dt>" in html


def test_a_live_part_answers_204_while_nothing_changes_and_redraws_when_a_round_lands(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    page.score(run_id, 1, 0.40, 0.45)
    page.settle()
    rounds = page.client.get(f"/runs/{run_id}/rounds", headers=HTMX).text
    stamp = re.search(r"\?v=([0-9a-f]+)", rounds).group(1)
    assert page.client.get(f"/runs/{run_id}/rounds?v={stamp}", headers=HTMX).status_code == 204
    page.score(run_id, 2, 0.50, 0.52)
    page.settle()
    redrawn = page.client.get(f"/runs/{run_id}/rounds?v={stamp}", headers=HTMX)
    assert redrawn.status_code == 200 and "Round 2" not in redrawn.text.split("<tbody>")[0]
    assert re.findall(r"<tr[^>]*>\s*<td class=\"num\">(\d+)", redrawn.text) == ["2", "1", "0"]
    status = page.client.get(f"/runs/{run_id}/status", headers=HTMX).text
    assert "33% of rounds done" not in status and "67% of rounds done" in status
    assert "Time left (est.): <strong>1 min</strong>" in status


def test_a_finished_run_gives_its_history_and_offers_merge_and_a_new_run_from_its_adapter(page: Page) -> None:
    run_id = page.finished_run()
    page.settle()
    assert page.read_models.run(page.org_id, run_id).live is False

    html = page.client.get(f"/runs/{run_id}").text
    assert "hx-trigger" not in html
    assert "Finished all 2 rounds · best round 2" in html
    for action in ("Use this adapter", "Merge model", "Start another run from this adapter", "rounds.csv"):
        assert action in html
    rounds = list(csv.DictReader(io.StringIO(page.client.get(f"/runs/{run_id}/rounds.csv").text)))
    assert [r["round_number"] for r in rounds] == ["0", "1", "2"] and rounds[2]["accuracy"] == "0.55"
    assert list(rounds[2])[list(rounds[2]).index("log_line") + 1] == "scored_at"  # the columns' order is kept
    assert rounds[2]["log_line"].startswith("Round 2 of 2: reward ") and rounds[0]["log_line"].startswith("Round 0 ")
    assert history_rounds_lines(page, run_id) == [r["log_line"] for r in rounds]
    events = page.client.get(f"/runs/{run_id}/events.csv").text.splitlines()
    assert events[0].startswith("position,time,actor_kind") and len(events) == 1 + 9
    history = page.client.get(f"/runs/{run_id}/history.json")
    assert history.headers["content-disposition"].startswith("attachment")
    assert [e["event_type"] for e in history.json()["events"]][-1] == "Completed"
    missing = page.client.get(f"/runs/{run_id}/adapter.zip")
    assert missing.status_code == 404 and "not in the storage" in missing.text

    form = page.client.get(f"/runs/new?start_run={run_id}").text
    assert re.search(rf'<option value="{run_id}"\s+selected', form)


def test_merge_model_is_recorded_shown_while_it_runs_and_then_where_the_checkpoint_is(page: Page) -> None:
    run_id = page.finished_run()
    page.settle()
    merged = page.client.post(f"/runs/{run_id}/merge", follow_redirects=False)
    assert merged.status_code == 303 and page.merged == [run_id]
    html = page.client.get(merged.headers["location"]).text
    assert "Merge model is on its way" in html and f'hx-get="/runs/{run_id}/summary?v=' in html  # it polls
    assert f'action="/runs/{run_id}/merge"' not in html  # no second merge meanwhile
    again = page.client.post(f"/runs/{run_id}/merge", follow_redirects=False)
    assert again.status_code == 409 and "already being merged" in again.text and page.merged == [run_id]

    worker = Actor("system", "worker:w1", "Worker w1")
    page.verity.record_model_merged(run_id, f"/data/storage/runs/{run_id}/merged",
                                    ["config.json", "model.safetensors"], 3 * 2**20, worker)
    page.settle()
    summary = page.client.get(f"/runs/{run_id}/summary", headers=HTMX).text
    assert f"Merged model written to runs/{run_id}/merged (2 files, 3.0 MiB)." in summary  # its key in the storage
    assert "hx-trigger" not in summary  # done: the summary stops polling
    sentences = [entry.sentence for entry in page.read_models.timeline(page.org_id, run_id)][-2:]
    assert sentences == [
        "owner@localhost asked for the adapter of round 2 to be merged into the base model.",
        f"The merged model is written to runs/{run_id}/merged: 2 files, 3,145,728 bytes.",
    ]


def test_a_merge_the_jobs_cannot_be_sent_ends_in_words_and_may_be_asked_for_again(page: Page) -> None:
    run_id = page.finished_run()
    page.settle()
    page.merged.broken = True
    html = page.client.post(f"/runs/{run_id}/merge").text
    assert "The merge could not be sent to a worker: the job queue is out of reach" in html
    assert f'action="/runs/{run_id}/merge"' in html  # Merge model is offered again
    assert [e.event_type for e in page.read_models.timeline(page.org_id, run_id)][-2:] == [
        "MergeRequested", "MergeFailed"
    ]
    page.merged.broken = False
    assert page.client.post(f"/runs/{run_id}/merge", follow_redirects=False).status_code == 303
    assert page.merged == [run_id]


def test_merge_model_through_the_api(page: Page) -> None:
    run_id = page.finished_run()
    page.settle()
    answer = page.client.post(f"/api/runs/{run_id}/merge")
    assert answer.status_code == 202, answer.text
    assert answer.json()["run"]["merge"]["state"] == "merging" and page.merged == [run_id]
    refused = page.client.post(f"/api/runs/{run_id}/merge")
    assert refused.status_code == 409 and "already being merged" in refused.text


def test_merge_is_refused_while_a_run_trains(page: Page) -> None:
    run_id = page.launched_run()
    page.settle()
    answer = page.client.post(f"/runs/{run_id}/merge", follow_redirects=False)
    assert answer.status_code == 409 and page.merged == [], answer.text[-600:]
    assert "Only a run whose adapter is ready can be merged into a model." in answer.text


def test_the_trial_report_shows_its_measures_estimate_and_advice(page: Page) -> None:
    run_id = page.launched_run(kind="trial")
    page.score(run_id, 0, None, 0.30)
    page.score(run_id, 1, 0.40, 0.45)
    advice = "The estimate holds for the same GPU, model revision, answers per prompt, longest sampled answer, "
    report = TrialReport(
        finished=True,
        formatting="8 of 8 prompts well formed",
        seconds_per_round=6.5,
        peak_memory_bytes=3 * 2**30,
        gpu_memory_bytes=80 * 2**30,
        sampling_seconds=3.0,
        grading_seconds=0.5,
        update_seconds=2.0,
        validation_seconds=1.0,
        full_training_seconds=4 * 3600,
        full_training_rounds=20,
        full_gpu_cost=12.5,
        advice=[advice + "context length and adapter settings."],
    )
    page.verity.record_trial_report(run_id, report)
    page.verity.record_completed(run_id)
    page.settle()
    html = page.client.get(f"/runs/{run_id}").text
    for label, value in (
        ("Formatting", "8 of 8 prompts well formed"),
        ("Seconds per round", "6.5 s"),
        ("Peak GPU memory", "3.00 GiB of 80 GiB (4%)"),
        ("Sampling", "3.0 s"),
        ("Grading", "0.5 s"),
        ("Update", "2.0 s"),
        ("Validation", "1.0 s"),
        ("Full training time", "4 h 0 min for 20 rounds"),
        ("Full GPU cost", "$12.50"),
    ):
        assert f"<dt>{label}</dt><dd>{value}</dd>" in html, label
    assert advice in html and "Configure the full run" in html


def test_a_run_is_live_until_it_has_ended_and_no_longer(page: Page) -> None:
    def live(run_id: UUID) -> bool:
        page.settle()
        return page.read_models.run(page.org_id, run_id).live

    draft = page.verity.save_run(
        page.org_id, page.project_id, run_body_from_api({"training": {"rl": {"reward": MATH_PAIRS}}}), OWNER
    ).id
    assert live(draft) is False
    completed, stopped = page.launched_run(rounds=2), page.launched_run(rounds=2)
    assert live(completed) and live(stopped)
    for run_id in (completed, stopped):
        page.score(run_id, 0, None, 0.30)
        page.score(run_id, 1, 0.40, 0.45)
    page.verity.record_saving_adapter(completed)
    page.verity.record_adapter_ready(completed, 1, "here", "ab" * 32, 4)
    assert live(completed)  # all rounds done: Completed comes next
    page.verity.record_completed(completed)
    assert live(completed) is False
    page.verity.record_stopped(stopped, "time_limit", "")
    assert live(stopped)
    page.verity.record_adapter_ready(stopped, 1, "here", "ab" * 32, 4)
    assert live(stopped) is False  # an early stop ends at Adapter ready
    assert [r.accuracy for r in page.read_models.rounds(page.org_id, stopped)] == [0.40, None]


LIVE_PARTS = ("status", "summary", "reward", "metrics", "rounds", "logs", "steps", "samples")


def test_a_part_opened_in_a_browser_tab_sends_the_reader_to_the_whole_run_page(page: Page) -> None:
    run_id = page.finished_run()
    page.settle()
    for part in LIVE_PARTS:
        opened = page.client.get(f"/runs/{run_id}/{part}", follow_redirects=False)
        assert opened.status_code == 303 and opened.headers["location"] == f"/runs/{run_id}", (part, opened.text)
        whole = page.client.get(f"/runs/{run_id}/{part}")
        assert whole.status_code == 200 and "<!doctype html>" in whole.text and "Finished all 2 rounds" in whole.text
        restored = page.client.get(  # the back button after hx-push-url asks for the whole page too
            f"/runs/{run_id}/{part}", headers={**HTMX, "HX-History-Restore-Request": "true"}, follow_redirects=False
        )
        assert restored.status_code == 303, part
        fragment = page.client.get(f"/runs/{run_id}/{part}", headers=HTMX)
        assert fragment.status_code == 200 and "<!doctype html>" not in fragment.text, part
    timeline = page.client.get(f"/runs/{run_id}/timeline")  # the Timeline tab's own address: a whole page
    assert timeline.status_code == 200 and "<!doctype html>" in timeline.text and "The run completed." in timeline.text
    timeline_part = page.client.get(f"/runs/{run_id}/timeline", headers=HTMX)
    assert timeline_part.status_code == 200 and "<!doctype html>" not in timeline_part.text
    assert "The run completed." in timeline_part.text


def test_a_live_part_polled_with_its_stamp_answers_204_only_to_htmx(page: Page) -> None:
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    page.score(run_id, 1, 0.40, 0.45)
    page.settle()
    stamp = re.search(r"\?v=([0-9a-f]+)", page.client.get(f"/runs/{run_id}/rounds", headers=HTMX).text).group(1)
    for part in LIVE_PARTS:
        assert page.client.get(f"/runs/{run_id}/{part}?v={stamp}", headers=HTMX).status_code == 204, part
        tab = page.client.get(f"/runs/{run_id}/{part}?v={stamp}", follow_redirects=False)
        assert tab.status_code == 303 and tab.headers["location"] == f"/runs/{run_id}", part
    assert "<!doctype html>" in page.client.get(f"/runs/{run_id}/logs?v={stamp}").text


def test_a_part_of_a_run_of_no_one_here_is_not_found_with_or_without_htmx(page: Page) -> None:
    nowhere = "00000000-0000-4000-8000-000000000000"
    for part in (*LIVE_PARTS, "timeline"):
        assert page.client.get(f"/runs/{nowhere}/{part}", follow_redirects=False).status_code == 404, part
        assert page.client.get(f"/runs/{nowhere}/{part}", headers=HTMX).status_code == 404, part


def test_readers_see_where_files_are_in_the_storage_never_the_servers_own_paths(page: Page) -> None:
    storage_folder = str(page.storage.root)  # the data folder's storage: the trainer and the merge job write there
    run_id = page.launched_run(rounds=1)
    page.score(run_id, 0, None, 0.30)
    page.score(run_id, 1, 0.40, 0.45)
    page.verity.record_saving_adapter(run_id)
    saved_at = page.storage.root / "runs" / str(run_id) / "adapter"  # as the trainer reports it
    page.verity.record_adapter_ready(run_id, 1, str(saved_at), "ab" * 32, 4)
    page.verity.record_completed(run_id)
    held_out = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
    evaluation = page.verity.create_evaluation(  # its Created event carries the adapter it scores, location and all
        page.org_id, page.project_id, name="adapter", source=held_out, scoring={"preset": "verifiable"},
        main_metric="math_pairs", actor=OWNER, adapter_run=run_id,
    ).id
    page.settle()
    assert page.client.post(f"/runs/{run_id}/merge", follow_redirects=False).status_code == 303
    merged = page.storage.root / "runs" / str(run_id) / "merged"
    page.verity.record_model_merged(run_id, f"{merged}/", ["model.safetensors"], 2**20, OWNER)
    on_s3 = page.launched_run(rounds=1)  # a run of an organization whose storage is its own S3 bucket
    page.score(on_s3, 0, None, 0.30)
    page.score(on_s3, 1, 0.40, 0.45)
    page.verity.record_saving_adapter(on_s3)
    page.verity.record_adapter_ready(on_s3, 1, f"s3://team-bucket/verity/runs/{on_s3}/adapter", "cd" * 32, 4)
    page.verity.record_completed(on_s3)
    page.settle()

    feed = page.client.get("/api/events", params={"after": 0, "limit": 1000})
    run = page.client.get(f"/api/runs/{run_id}").json()
    answers = {
        "feed": feed.text,
        "runs": page.client.get("/api/runs").text,
        "run": json.dumps(run),
        "timeline": page.client.get(f"/api/runs/{run_id}/events").text,
        "evaluation": page.client.get(f"/api/evaluations/{evaluation}").text,
        "run on S3": page.client.get(f"/api/runs/{on_s3}").text,
        "merged again": page.client.post(f"/api/runs/{run_id}/merge").text,  # refused: it says where the model is
        "page": page.client.get(f"/runs/{run_id}").text,
        "timeline page": page.client.get(f"/runs/{run_id}/timeline").text,
        "history": page.client.get(f"/runs/{run_id}/history.json").text,
    }
    for name, text in answers.items():
        assert storage_folder not in text and "s3://" not in text, name

    assert run["adapter"]["location"] == f"runs/{run_id}/adapter"
    assert run["merge"]["location"] == f"runs/{run_id}/merged/"
    assert page.client.get(f"/api/runs/{on_s3}").json()["adapter"]["location"] == f"runs/{on_s3}/adapter"
    ours = (str(run_id), str(evaluation))
    shown = {e["type"]: e["data"] for e in feed.json()["events"] if e["aggregate_id"] in ours}
    assert shown["Run.AdapterReady"]["location"] == f"runs/{run_id}/adapter"
    assert shown["Run.ModelMerged"]["location"] == f"runs/{run_id}/merged/"
    assert shown["Evaluation.Created"]["adapter"]["location"] == f"runs/{run_id}/adapter"
    assert f"the full checkpoint is in storage at runs/{run_id}/merged/." in answers["merged again"]
    assert f"Merged model written to runs/{run_id}/merged/ (" in answers["page"]
    # the events keep what the workers reported: the jobs read the files back from there
    assert page.verity.get_run(page.org_id, run_id).adapter["location"].startswith(storage_folder)


def test_long_tables_show_their_newest_rows_until_show_all_and_keep_showing_all_while_live(page: Page) -> None:
    run_id = page.launched_run(rounds=ROUNDS_SHOWN + 20)
    page.score(run_id, 0, None, 0.30)
    for number in range(1, ROUNDS_SHOWN + 6):
        page.score(run_id, number, 0.40, 0.45)
    page.settle()
    rounds = page.client.get(f"/runs/{run_id}/rounds", headers=HTMX).text
    shown = [int(n) for n in re.findall(r'<td class="num">(\d+)', rounds)[::6]]
    assert shown == list(range(ROUNDS_SHOWN + 5, 5, -1))  # the newest first, 50 of them
    assert f"The latest {ROUNDS_SHOWN} of {ROUNDS_SHOWN + 6} rounds." in rounds
    assert re.search(r'hx-get="/runs/[^"]+/rounds\?all=1"[^>]*>Show all</button>', rounds)
    everything = page.client.get(f"/runs/{run_id}/rounds?all=1", headers=HTMX).text
    assert everything.count("<tr") == ROUNDS_SHOWN + 7 and "Show all" not in everything  # the head and each round
    assert re.search(r'hx-get="/runs/[^"]+/rounds\?v=\w+&amp;all=1" hx-trigger="every 2s"', everything)

    logs = page.client.get(f"/runs/{run_id}/logs", headers=HTMX).text
    lines = re.findall(r"Round (\d+) of \d+:", logs)
    assert lines == [str(n) for n in range(6, ROUNDS_SHOWN + 6)]  # the latest 50 lines, oldest of them first
    every_line = page.client.get(f"/runs/{run_id}/logs?all=1", headers=HTMX).text
    assert re.findall(r"Round (\d+) of \d+:", every_line) == [str(n) for n in range(ROUNDS_SHOWN + 6)]


def test_a_part_drawn_once_for_a_state_is_drawn_for_each_role(page: Page) -> None:
    """Viewers of one state of a run share its drawings, but never across roles: a viewer's status line refuses
    what an owner's offers."""
    run_id = page.launched_run()
    page.score(run_id, 0, None, 0.30)
    page.settle()
    owners = page.client.get(f"/runs/{run_id}/status", headers=HTMX).text
    viewer = {**HTMX, **bearer_headers(page.verity, page.org_id, role="viewer")}
    viewers = page.client.get(f"/runs/{run_id}/status", headers=viewer).text
    assert ">Cancel run<" in owners and 'class="role-note"' not in owners
    assert ">Cancel run<" not in viewers and 'class="role-note"' in viewers
    assert page.client.get(f"/runs/{run_id}/status", headers=HTMX).text == owners


def history_rounds_lines(page: Page, run_id: UUID) -> list[str]:
    return [r["log_line"] for r in page.client.get(f"/runs/{run_id}/history.json").json()["rounds"]]
