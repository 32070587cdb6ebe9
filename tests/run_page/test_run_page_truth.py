"""The run page says what is true, through the test client over SQLite, with progress recorded as the jobs record it:
an SFT run's progress in steps (never "0% of rounds done"); a trial that did not finish says so and offers no full
run; memory measured on a CPU is named as such; a custom reward by its metric's name and version; Score against
baseline and New evaluation evaluate a finished run's adapter; Launch is refused in words where the worker can't load
the public GSM8K set, before anything is queued."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from uuid import UUID, uuid4

import pytest
from consoles import ClientConsole, client_console

from app.runs.readiness import LAUNCH_READINESS
from domain.actors import Actor
from domain.runs.progress import RoundResult, StepLog, TrialReport
from domain.runs.settings import run_body_from_api
from jobs.readiness import launch_readiness

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": True}
DID_NOT_FINISH = "The trial did not finish. Fix its error and run it again before full training."
EXACT_YEAR = "def score(answer, reference):\n    return 1.0 if reference in answer else 0.0\n"


class Console(ClientConsole):
    """The console over the test client, with runs recorded as the jobs record them."""

    def page(self, run_id: UUID) -> str:
        self.settle()
        return unescape(self.client.get(f"/runs/{run_id}").text)

    def saved(self, body: dict) -> UUID:
        return self.verity.save_run(self.org_id, self.project_id, run_body_from_api(body), OWNER).id

    def launched(self, body: dict) -> UUID:
        run_id = self.saved(body)
        self.verity.launch_run(self.org_id, run_id, OWNER, "owner")
        self.verity.record_preparing(run_id)
        return run_id

    def version(self) -> str:
        dataset_id = self.verity.create_dataset(self.org_id, f"math {uuid4().hex[:6]}", OWNER).id
        return str(self.verity.record_dataset_version(
            self.org_id, dataset_id, version_id=uuid4(), storage_key="datasets/m",
            split_counts={"train": 8, "validation": 2, "test": 2}, shape="messages", has_images=False, actor=OWNER,
        ).id)

    def scored(self, run_id: UUID) -> None:
        """Round 0 and round 1, as the jobs record them."""
        for number in (0, 1):
            self.verity.record_round_scored(run_id, RoundResult(
                round_number=number, validation_reward=0.4 + number / 10, reward=None if number == 0 else 0.4,
                signal=None if number == 0 else 0.5, cut_off=None if number == 0 else 0.0,
                graded_answers=0 if number == 0 else 8, updated=number > 0))

    def finished_rl_run(self, **body: object) -> UUID:
        run_id = self.launched({"name": "finished", "training": {"rl": {"rounds": 1, "reward": MATH_PAIRS}}, **body})
        self.scored(run_id)
        self.verity.record_saving_adapter(run_id)
        self.verity.record_adapter_ready(run_id, 1, f"runs/{run_id}/adapter", "ab" * 32, 4)
        self.verity.record_completed(run_id)
        return run_id


@pytest.fixture
def console(sqlite_settings) -> Iterator[Console]:
    with client_console(sqlite_settings, Console) as console:
        yield console


def status_line(html: str) -> str:
    return re.search(r'<p class="status-line">(.*?)</p>', html, re.S).group(1)


def test_an_sft_run_counts_steps_while_it_trains_and_no_rounds_once_it_ended(console: Console) -> None:
    body = {"name": "sft", "dataset_version": console.version(), "training": {"objective": "sft"}}
    run_id = console.launched(body)
    console.verity.record_step_logged(run_id, StepLog(1, 4, 0.25, 2.0, 1.0))
    console.settle()
    live = unescape(console.client.get(f"/runs/{run_id}/timeline").text)  # every tab's status line says it
    assert "1 of 4 steps done" in status_line(live) and "rounds" not in status_line(live)

    for step in (2, 3, 4):
        console.verity.record_step_logged(run_id, StepLog(step, 4, step / 4, 1.0, 1.0 + step))
    console.verity.record_saving_adapter(run_id)
    console.verity.record_adapter_ready(run_id, 4, f"runs/{run_id}/adapter", "ab" * 32, 4)
    console.verity.record_completed(run_id)
    ended = status_line(console.page(run_id))
    assert "rounds done" not in ended and "steps done" not in ended and "<progress" not in ended


def test_start_another_run_from_an_sft_adapter_opens_rl_starting_from_it(console: Console) -> None:
    version = console.version()
    body = {"name": "sft first", "dataset_version": version, "training": {"objective": "sft"}}
    run_id = console.launched(body)
    console.verity.record_step_logged(run_id, StepLog(1, 1, 1.0, 1.0, 1.0))
    console.verity.record_saving_adapter(run_id)
    console.verity.record_adapter_ready(run_id, 1, f"runs/{run_id}/adapter", "ab" * 32, 4)
    console.verity.record_completed(run_id)
    page = console.page(run_id)
    start = re.search(r'href="([^"]+)">Start another run from this adapter', page).group(1)
    form = console.client.get(start).text
    assert re.search(r'<option value="rl"\s+selected', form), "the form opens on RL"
    assert re.search(rf'<option value="{run_id}"\s+selected', form), "Start from is the SFT run"


def test_a_trial_that_failed_before_it_reported_says_it_did_not_finish_and_offers_no_full_run(console) -> None:
    run_id = console.launched({"name": "trial", "kind": "trial", "training": {"rl": {"reward": MATH_PAIRS}}})
    console.verity.record_failed(run_id, "GSM8K could not be loaded from openai/gsm8k: no network.")
    page = console.page(run_id)
    assert DID_NOT_FINISH in page
    assert "Configure the full run" not in page


def test_a_trial_measured_on_a_cpu_names_the_process_memory_and_a_finished_one_offers_the_full_run(console) -> None:
    run_id = console.launched({"name": "trial", "kind": "trial", "training": {"rl": {"reward": MATH_PAIRS}}})
    report = TrialReport(finished=True, formatting="8 of 8 prompts well formed", seconds_per_round=2.0,
                         peak_memory_bytes=3 * 2**29, gpu_memory_bytes=None, advice=[])
    console.scored(run_id)
    console.verity.record_trial_report(run_id, report)
    console.verity.record_completed(run_id)
    page = console.page(run_id)
    assert "<dt>Peak memory (CPU, process)</dt><dd>1.50 GiB</dd>" in page
    assert "Peak GPU memory" not in page
    assert DID_NOT_FINISH not in page and "Configure the full run" in page


def test_a_custom_reward_reads_its_metrics_name_and_version(console: Console) -> None:
    version = console.client.post("/api/custom-metrics", json={"name": "exact_year", "source": EXACT_YEAR}).json()
    reward = {"preset": "qa", "metric": f"custom.{version['id']}"}
    run_id = console.saved({"name": "years", "kind": "trial", "training": {"rl": {"reward": reward}}})
    assert "<dt>Reward</dt>\n      <dd>exact_year (v1) · Q&A</dd>" in console.page(run_id)


def test_score_against_baseline_on_the_run_page_makes_the_evaluation_and_opens_it(console: Console) -> None:
    held_out = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}
    baseline = console.verity.create_evaluation(console.org_id, console.project_id, name="Baseline", source=held_out,
                                                scoring={"preset": "verifiable"}, main_metric="math_pairs",
                                                actor=OWNER).id
    console.verity.record_evaluation_started(baseline)
    console.verity.record_evaluation_completed(baseline, 0.25, {"score": 0.25}, [])
    without = console.finished_rl_run()
    assert "Score against baseline" not in console.page(without)  # no baseline to compare with

    run_id = console.finished_rl_run(baseline=str(baseline))
    assert "Score against baseline" in console.page(run_id)
    answer = console.client.post(f"/runs/{run_id}/score-against-baseline", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"].startswith("/evaluations/")
    made = console.client.get(f"/api{answer.headers['location']}").json()["evaluation"]
    assert (made["adapter_run"], made["baseline_id"]) == (str(run_id), str(baseline))


def test_new_evaluation_offers_a_finished_runs_adapter_as_what_is_evaluated(console: Console) -> None:
    run_id = console.finished_rl_run()
    console.settle()
    form = unescape(console.client.get("/evaluations/new").text)
    assert '<option value="">The base model</option>' in form
    assert f'<option value="{run_id}">finished · its adapter</option>' in form
    answer = console.client.post("/evaluations/new", data={
        "name": "the adapter", "project": str(console.project_id), "adapter_run": str(run_id),
        "source": "benchmark:math_pairs_held_out", "count": "8", "metric": "verifiable:math_pairs",
        "max_answer_tokens": "16"}, follow_redirects=False)
    assert answer.status_code == 303, answer.text[-800:]
    made = console.client.get(f"/api{answer.headers['location']}").json()["evaluation"]
    assert made["adapter_run"] == str(run_id)


def test_launch_is_refused_in_words_where_the_worker_cannot_load_gsm8k(console: Console, monkeypatch, tmp_path):
    monkeypatch.setenv("VERITY_GSM8K_SOURCE", str(tmp_path / "gsm8k.jsonl"))  # named, and not there
    console.client.app.state[LAUNCH_READINESS] = launch_readiness(["local"])  # the worker in this process
    gsm8k = {"preset": "verifiable", "metric": "gsm8k"}
    run_id = console.saved({"name": "gsm8k", "kind": "trial", "training": {"rl": {"reward": gsm8k}}})
    console.settle()
    refused = console.client.post(f"/runs/{run_id}/launch")
    assert refused.status_code == 409
    words = "GSM8K can't be loaded on this worker: VERITY_GSM8K_SOURCE names"
    assert words in unescape(refused.text) and 'id="run-status"' in refused.text  # on the run page, not an error
    api = console.client.post(f"/api/runs/{run_id}/launch")
    assert api.status_code == 409 and api.json()["detail"].startswith(words)
    assert console.client.get(f"/api/runs/{run_id}").json()["state"] == "draft"  # nothing was queued
