"""The run page says what is true and offers what a finished run can do, in headless Chromium against one
`verity serve` for the module, whose in-process worker trains the tiny model for real.

Its worker is told to load GSM8K from a file that is not there yet (VERITY_GSM8K_SOURCE; the hub is switched off):
Launch refuses a GSM8K trial in words, before anything is queued; once the file is there but not in GSM8K's shape,
the trial fails on the worker, and its page says it did not finish and offers no full run. A Math Pairs trial on
this CPU names the memory it measured. A finished SFT run says no rounds, and its adapter starts an RL run. A
finished RL run with a baseline is scored against it from its page, and New evaluation evaluates its adapter. A
custom reward reads its metric's name and version.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from consoles import chromium, needs_chromium, sign_in
from playwright.sync_api import expect

from domain.rewards.math_pairs import math_pairs_problem

if TYPE_CHECKING:
    from conftest import Served

ENDED = ("completed", "failed", "cancelled")
MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 16, "format_bonus": True}
ADVANCED = {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128}
TINY_RL = {"rounds": 2, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16}
GSM8K_TRIAL = {"name": "gsm8k trial", "kind": "trial",
               "training": {"rl": {**TINY_RL, "reward": {"preset": "verifiable", "metric": "gsm8k"}},
                            "advanced": ADVANCED}}
DID_NOT_FINISH = "The trial did not finish. Fix its error and run it again before full training."
EXACT_YEAR = "def score(answer, reference):\n    return 1.0 if reference in answer else 0.0\n"

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def gsm8k_source(tmp_path_factory) -> Iterator[Path]:
    """Where the worker is told to load GSM8K from: nothing there yet; the hub switched off, its cache empty."""
    folder = tmp_path_factory.mktemp("gsm8k")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VERITY_GSM8K_SOURCE", str(folder / "gsm8k.jsonl"))
        patch.setenv("HF_HOME", str(folder / "hf"))
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_DATASETS_OFFLINE", "1")
        yield folder / "gsm8k.jsonl"


@pytest.fixture(scope="module")
def served(gsm8k_source: Path, served: Served) -> Served:
    """tests/run_page/conftest.py's console, started once the environment above is set (it reads it at start)."""
    return served


@pytest.fixture(scope="module")
def browser_page(served: Served):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium(playwright)
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.on("dialog", lambda dialog: dialog.accept())  # Launch asks first
        sign_in(page, served.url, served.email, served.password)
        yield page
        browser.close()


def _api(served: Served, method: str, path: str, **kwargs) -> dict:
    answer = httpx.request(method, f"{served.url}/api{path}", headers=served.api, timeout=30, **kwargs)
    assert answer.status_code < 300, answer.text
    return answer.json()


def _until(read, done, timeout: float = 240.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        assert time.monotonic() < deadline, f"still {value.get('state')}: {value.get('failure')}"
        time.sleep(0.5)


def _trained(served: Served, body: dict) -> dict:
    """A run saved, launched and trained to its end on the console's own worker."""
    run = _api(served, "POST", "/runs", json=body)["run"]
    _api(served, "POST", f"/runs/{run['id']}/launch")
    return _until(lambda: served.run(run["id"]), lambda r: r["state"] in ENDED)


def _conversations(seed: int, count: int) -> bytes:
    rng = random.Random(seed)
    return "".join(json.dumps({"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]})
                   + "\n" for q, a in (math_pairs_problem(rng) for _ in range(count))).encode()


def test_a_gsm8k_run_this_worker_cannot_load_is_refused_at_launch_in_words(
    served: Served, browser_page, gsm8k_source: Path
) -> None:
    page = browser_page
    run = _api(served, "POST", "/runs", json=GSM8K_TRIAL)["run"]
    page.goto(f"{served.url}/runs/{run['id']}")
    page.click("#run-status button:has-text('Launch')")
    expect(page.locator("#run-status .refusal")).to_have_text(
        f"GSM8K can't be loaded on this worker: VERITY_GSM8K_SOURCE names {gsm8k_source}, which is not "
        "there. Upload GSM8K as a Dataset version, or set VERITY_GSM8K_SOURCE.")
    expect(page.locator("#run-status .badge")).to_have_text("Draft")
    assert served.run(run["id"])["state"] == "draft"  # nothing was queued


def test_a_trial_that_failed_on_the_worker_says_it_did_not_finish_and_offers_no_full_run(
    served: Served, browser_page, gsm8k_source: Path
) -> None:
    page = browser_page
    gsm8k_source.write_text(json.dumps({"question": "What is 2 + 2?"}) + "\n")  # there now, not in GSM8K's shape
    run = _trained(served, GSM8K_TRIAL)
    assert run["state"] == "failed" and "GSM8K could not be loaded" in run["failure"]
    page.goto(f"{served.url}/runs/{run['id']}")
    expect(page.locator("#trial-report .advice")).to_have_text([DID_NOT_FINISH])
    expect(page.get_by_text("Configure the full run")).to_have_count(0)


def test_a_trial_on_this_cpu_names_the_memory_it_measured(served: Served, browser_page) -> None:
    page = browser_page
    body = {"name": "math pairs trial", "kind": "trial",
            "training": {"rl": {**TINY_RL, "reward": MATH_PAIRS}, "advanced": ADVANCED}}
    run = _trained(served, body)
    assert run["state"] == "completed", run["failure"]
    page.goto(f"{served.url}/runs/{run['id']}")
    report = page.locator("#trial-report")
    measured = report.locator("dt:has-text('Peak memory (CPU, process)') + dd")
    expect(measured).to_have_text(re.compile(r"^\d+\.\d\d GiB$"))  # the training process's peak
    expect(report).not_to_contain_text("Peak GPU memory")
    expect(page.locator("#trial-report a", has_text="Configure the full run")).to_have_count(1)  # it finished


def test_a_finished_sft_run_says_no_rounds_and_its_adapter_starts_an_rl_run(served: Served, browser_page) -> None:
    page = browser_page
    dataset = _api(served, "POST", "/datasets", json={"name": "math chats"})
    files = {"train": ("train.jsonl", _conversations(1, 32)), "validation": ("v.jsonl", _conversations(2, 8)),
             "test": ("t.jsonl", _conversations(3, 8))}
    version = _api(served, "POST", f"/datasets/{dataset['id']}/versions", files=files)
    body = {"name": "sft first", "dataset_version": version["id"],
            "training": {"objective": "sft", "sft": {"epochs": 1, "batch_size": 8},
                         "advanced": {**ADVANCED, "micro_batch_size": 8}}}
    run = _trained(served, body)
    assert run["state"] == "completed", run["failure"]
    page.goto(f"{served.url}/runs/{run['id']}")
    expect(page.locator("#run-status .badge")).to_have_text("Completed")
    expect(page.locator("#run-status .status-line")).not_to_contain_text("rounds done")
    page.click("text=Start another run from this adapter")
    page.wait_for_url("**/runs/new?start_run=*")
    assert page.input_value("#input-objective") == "rl"
    assert page.input_value("#input-start_run") == run["id"]


def test_a_finished_run_is_scored_against_its_baseline_from_its_page(served: Served, browser_page) -> None:
    page = browser_page
    draft = {"name": "which project", "training": {"rl": {"reward": MATH_PAIRS}}}
    project_id = _api(served, "POST", "/runs", json=draft)["run"]["project_id"]  # the Demo project's
    baseline = _api(served, "POST", "/evaluations", json={
        "project_id": project_id, "name": "Baseline", "scoring": {"preset": "verifiable"},
        "source": {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}, "main_metric": "math_pairs",
        "max_answer_tokens": 16})
    done = _until(lambda: _api(served, "GET", f"/evaluations/{baseline['id']}")["evaluation"],
                  lambda e: e["state"] in ("completed", "failed"))
    assert done["state"] == "completed", done
    body = {"name": "from the baseline", "baseline": baseline["id"],
            "training": {"rl": {**TINY_RL, "reward": None}, "advanced": ADVANCED}}
    run = _trained(served, body)
    assert run["state"] == "completed", run["failure"]

    page.goto(f"{served.url}/runs/{run['id']}")
    page.click("#run-actions button:has-text('Score against baseline')")
    page.wait_for_url(f"{served.url}/evaluations/*")
    expect(page.locator("h1")).to_have_text("from the baseline against baseline")
    made = _api(served, "GET", page.url.removeprefix(served.url))["evaluation"]
    assert (made["adapter_run"], made["baseline_id"]) == (run["id"], baseline["id"])

    page.goto(f"{served.url}/evaluations/new")  # New evaluation offers the same adapter as what is evaluated
    page.select_option("#input-adapter-run", label="from the baseline · its adapter")
    page.fill("#input-name", "the adapter, on its own")
    page.select_option("#input-metric", "verifiable:math_pairs")
    page.click("button:has-text('Start evaluation')")
    page.wait_for_url(f"{served.url}/evaluations/*-*")
    assert _api(served, "GET", page.url.removeprefix(served.url))["evaluation"]["adapter_run"] == run["id"]


def test_a_custom_reward_reads_its_metrics_name_and_version(served: Served, browser_page) -> None:
    page = browser_page
    version = _api(served, "POST", "/custom-metrics", json={"name": "exact_year", "source": EXACT_YEAR})
    body = {"name": "years", "kind": "trial", "training": {"rl": {"reward": {"preset": "qa",
                                                                            "metric": f"custom.{version['id']}"}}}}
    run = _api(served, "POST", "/runs", json=body)["run"]
    page.goto(f"{served.url}/runs/{run['id']}")
    reward = page.locator("#run-summary dt:has-text('Reward') + dd")
    expect(reward).to_have_text("exact_year (v1) · Q&A")

