"""Re-score with another reward, end to end on the tiny model (issue 22): the embedded console's API, its jobs and
real trainer processes. A run trains two rounds on Math Pairs; its stored answers are scored again with Exact match
against their references, and with an edited custom metric version, whose score of every stored answer the test
computes itself from the rollout files: exactly those answers move, the counts and the signal per round are right
(the old signal is the run's own round signal), and the rollout files stay byte for byte as they were."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable
from html import escape
from uuid import UUID

import pytest
from litestar.testing import TestClient

from app.factory import create_app
from tests.e2e.conftest import Site
from verity.storage import open_storage

pytestmark = pytest.mark.slow
EXACT = {"preset": "qa", "metric": "exact_match"}
CONTAINS = "def score(answer, reference):\n    return 1.0 if reference in answer else 0.0\n"
# the edited version: the first character alone, so a wrong answer that starts right moves up, a right one stays
FIRST_CHARACTER = ("def score(answer, reference):\n"
                   "    return 1.0 if answer.strip()[:1] == reference.strip()[:1] else 0.0\n")


def float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def rescored(site: Site, run_id: UUID, reward: dict) -> dict:
    answer = site.client.post("/api/rescorings", json={"source": {"kind": "run", "id": str(run_id)},
                                                       "reward": reward})
    assert answer.status_code == 201, answer.text
    rescoring_id = answer.json()["id"]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        site.read_models.wait_for(site.app_verity.recorder.max_notification_id() or 0, timeout=10)
        shown = site.client.get(f"/api/rescorings/{rescoring_id}").json()
        if not shown["rescoring"]["live"]:
            assert shown["rescoring"]["state"] == "scored", shown["rescoring"]["failure"]
            return shown
        time.sleep(0.3)
    raise AssertionError(f"re-scoring {rescoring_id} never ended")


def expected(rollouts: dict[int, bytes], new_score: Callable[[str, str], float]) -> dict:
    """What the re-scoring must find, from the rollout files: each answer's new score (0 when cut off)."""
    moved, per_round, gained, lost = set(), {}, [], []
    for number, raw in sorted(rollouts.items()):
        groups = [json.loads(line) for line in raw.decode().splitlines()]
        signal_old = signal_new = 0
        for p, group in enumerate(groups):
            old = [a["reward"] for a in group["answers"]]
            new = [0.0 if a["cut_off"] else float32(new_score(a["answer"], group["reference"]))
                   for a in group["answers"]]
            moved |= {(number, p, j) for j, (o, n) in enumerate(zip(old, new, strict=True)) if o != n}
            varied_old, varied_new = max(old) != min(old), max(new) != min(new)
            signal_old, signal_new = signal_old + varied_old, signal_new + varied_new
            if varied_new and not varied_old:
                gained.append({"round": number, "prompt": p})
            if varied_old and not varied_new:
                lost.append({"round": number, "prompt": p})
        per_round[number] = (signal_old / len(groups), signal_new / len(groups))
    return {"moved": moved, "per_round": per_round, "gained": gained, "lost": lost}


def test_a_finished_runs_answers_rescored_move_exactly_as_the_new_reward_says(embedded: Site) -> None:
    run_id = embedded.save(rounds=2)  # Math Pairs, 8 prompts × 4 answers of up to 16 tokens a round
    embedded.launch(run_id)
    run = embedded.wait_ended(run_id)
    assert run["state"] in ("completed", "adapter_ready", "failed"), run.get("failure")
    storage_dir = embedded.settings.local_storage_dir
    rollouts = {n: (storage_dir / f"runs/{run_id}/rollouts/round-{n:03d}.jsonl").read_bytes() for n in (1, 2)}
    rounds = {r["round_number"]: r for r in embedded.read_models.tables.select("rounds", {"run_id": str(run_id)})}

    metric = embedded.client.post("/api/custom-metrics", json={"name": "contains", "source": CONTAINS})
    assert metric.status_code == 201, metric.text
    edited = embedded.client.post(f"/api/custom-metrics/{metric.json()['metric_id']}/versions",
                                  json={"source": FIRST_CHARACTER})
    assert edited.status_code == 201, edited.text
    custom = {"preset": "qa", "metric": edited.json()["reward_metric"], "custom_metric": edited.json()["id"]}

    console = create_app(embedded.app_verity, embedded.read_models, storage=open_storage(embedded.settings))
    with TestClient(console) as client:
        client.headers["Authorization"] = embedded.client.headers["Authorization"]
        for reward, new_score in (
            (EXACT, lambda answer, reference: 1.0 if answer.strip() == reference.strip() else 0.0),
            (custom, lambda answer, reference: 1.0 if answer.strip()[:1] == reference.strip()[:1] else 0.0),
        ):
            shown = rescored(embedded, run_id, reward)
            want = expected(rollouts, new_score)
            summary = shown["rescoring"]["summary"]
            print(f"{shown['rescoring']['reward_label']}: {summary['moved']} of {summary['answers']} answers moved, "
                  f"signal per round {summary['per_round']['signal_old']} → {summary['per_round']['signal_new']}")
            assert (summary["answers"], summary["moved"]) == (64, len(want["moved"]))
            assert summary["moved_share"] == pytest.approx(len(want["moved"]) / 64)
            assert (summary["gained"], summary["lost"]) == (want["gained"], want["lost"])
            assert (summary["gained_signal"], summary["lost_signal"]) == (len(want["gained"]), len(want["lost"]))
            for row in shown["rounds"]:
                old, new = want["per_round"][row["round"]]
                assert (row["signal_old"], row["signal_new"]) == pytest.approx((old, new))
                assert row["signal_old"] == pytest.approx(rounds[row["round"]]["signal"])  # the run's own
            moved = client.get(f"/api/rescorings/{shown['rescoring']['id']}/answers",
                               params={"moved": "true", "limit": 1000}).json()["answers"]
            assert {(a["round"], a["prompt"], a["answer"]) for a in moved} == want["moved"]
            page = client.get(f"/rescorings/{shown['rescoring']['id']}").text
            assert "Signal per round" in page and escape(shown["rescoring"]["reward_label"]) in page
        assert "Re-score with another reward" in client.get(f"/runs/{run_id}").text
        feed = [e["type"] for e in client.get("/api/events", params={"limit": 1000}).json()["events"]]
        assert {"Rescoring.Saved", "Rescoring.Scoring", "Rescoring.Scored"} <= set(feed)
    # the stored answers were read, never edited
    assert {n: (storage_dir / f"runs/{run_id}/rollouts/round-{n:03d}.jsonl").read_bytes() for n in (1, 2)} == rollouts
