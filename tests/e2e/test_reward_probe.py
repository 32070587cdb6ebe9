"""Probe a reward, end to end on the tiny model (issue 22): the embedded console's API, its jobs and real trainer
processes. On Math Pairs, a reward that cannot vary (Schema validity against a JSON object schema: the tiny model
answers bare numbers, so every answer scores 0) says there is no signal; the same probe with Numeric accuracy
shows a signal, and a real run with that reward, the same seed and as many Prompts per round sees in round 1 the
same share of prompts whose answers differ, within sampling noise."""

from __future__ import annotations

import math
import time
from uuid import UUID

import pytest
from litestar.testing import TestClient

from app.factory import create_app
from tests.e2e.conftest import Site
from verity.storage import open_storage

pytestmark = pytest.mark.slow
NUMERIC = {"preset": "numeric", "metric": "numeric_accuracy"}
NEVER_VARIES = {"preset": "structured_json", "metric": "schema_validity", "response_schema": {"type": "object"}}
PROMPTS, ANSWERS, TOKENS = 16, 4, 16


def probed(site: Site, reward: dict) -> dict:
    body = {"name": f"{reward['metric']} on Math Pairs", "source": {"kind": "math_pairs"}, "reward": reward,
            "prompts": PROMPTS, "answers_per_prompt": ANSWERS, "max_answer_tokens": TOKENS}
    answer = site.client.post("/api/probes", json=body)
    assert answer.status_code == 201, answer.text
    probe_id = UUID(answer.json()["id"])
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        site.read_models.wait_for(site.app_verity.recorder.max_notification_id() or 0, timeout=10)
        shown = site.client.get(f"/api/probes/{probe_id}").json()
        if not shown["probe"]["live"]:
            assert shown["probe"]["state"] == "scored", shown["probe"]["failure"]
            return shown
        time.sleep(0.3)
    raise AssertionError(f"probe {probe_id} never ended")


def test_a_probe_tells_no_signal_from_a_signal_a_real_run_then_sees(embedded: Site) -> None:
    flat = probed(embedded, NEVER_VARIES)
    summary = flat["probe"]["summary"]
    assert (summary["varied_prompts"], summary["mean_score"], summary["histogram"][0]) == (0, 0.0, PROMPTS * ANSWERS)
    assert flat["probe"]["verdict"]["signal"] == "none"
    assert flat["probe"]["verdict"]["headline"] == (
        f"None of {PROMPTS} prompts has answers that differ: a run would learn nothing from this reward.")

    numeric = probed(embedded, NUMERIC)
    summary = numeric["probe"]["summary"]
    assert summary["varied_prompts"] > 0 and numeric["probe"]["verdict"]["signal"] != "none"
    stds = [p["std"] for p in numeric["prompts"]]
    assert stds == sorted(stds, reverse=True)  # most informative first
    probe_id = numeric["probe"]["id"]

    # a real run with the probe's reward, seed and prompts per round: its round 1 draws the same prompts
    run_id = embedded.save(rounds=1, prompts_per_round=PROMPTS, answers_per_prompt=ANSWERS, max_answer_tokens=TOKENS,
                           reward=NUMERIC)
    embedded.launch(run_id)
    run = embedded.wait_ended(run_id)
    assert run["state"] in ("completed", "adapter_ready"), run.get("failure")
    (round_1,) = embedded.read_models.tables.select("rounds", {"run_id": str(run_id), "round_number": 1})
    share = summary["varied_share"]
    # sampling noise: the standard error of a share of PROMPTS prompts (a binomial's), at the probe's share
    noise = math.sqrt(max(share * (1 - share), 0.25 * 0.75) / PROMPTS)
    print(f"probe signal {share:.3f} ({summary['varied_prompts']}/{PROMPTS}), run round 1 signal "
          f"{round_1['signal']:.3f}, noise (1 standard error) {noise:.3f}")
    assert abs(round_1["signal"] - share) <= 2 * noise

    # the page, its answers read from the storage folder, Use this reward, and the feed
    console = create_app(embedded.app_verity, embedded.read_models, storage=open_storage(embedded.settings))
    with TestClient(console) as client:
        client.headers["Authorization"] = embedded.client.headers["Authorization"]
        page = client.get(f"/probes/{probe_id}").text
        assert "Prompts, most informative first" in page and "Use this reward" in page
        first = client.get(f"/probes/{probe_id}/answers/{numeric['prompts'][0]['line']}").text
        assert "Reference" in first and "could not be loaded" not in first
        configure = client.get(f"/runs/new?probe={probe_id}").text
        assert '<option value="numeric_accuracy" selected' in configure, configure[:200]
        feed = [e["type"] for e in client.get("/api/events", params={"limit": 1000}).json()["events"]]
        assert {"Probe.Saved", "Probe.Sampling", "Probe.Scored"} <= set(feed)
