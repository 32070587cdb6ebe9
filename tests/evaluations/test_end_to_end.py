"""End to end on the tiny model, with the embedded jobs (SQLite, in-process worker, storage folder) and real
trainer processes: a baseline, a run whose reward comes from it, Score against baseline; loops on Math Pairs."""

from __future__ import annotations

import html
import itertools
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from measured_cpus import measured_on_intel_only

from domain.actors import Actor
from domain.application import Verity
from domain.runs.settings import run_body_from_api
from jobs.config import JobsConfig
from jobs.service import JobsHandle, start
from migrations import apply_migrations
from projections import evaluations as reads
from projections.runner import ProjectionRunner
from verity.config import Settings
from verity.wiring import build_application, build_read_models

pytestmark = pytest.mark.slow
OWNER = Actor("person", "owner@localhost", "owner@localhost")
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 16}
SCORING = {"preset": "verifiable", "format_bonus": True}
TINY = {"rounds": 1, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16}
# A loop round that learns: a dozen GRPO steps at the tiny model's best learning rate (notes: 0.41 -> 0.63 in 40
# steps). Seeded, the same settings give the same scores; measured here, round 2 (which goes on from round 1's
# adapter) scores 45.3% on 64 problems against round 1's 39.1%.
LEARNING_ROUND = {"rounds": 24, "prompts_per_round": 16, "answers_per_prompt": 8, "max_answer_tokens": 16}
ADVANCED = {"learning_rate": 5e-4, "micro_batch_size": 32, "training_window": 128}
FAST = JobsConfig(heartbeat_seconds=0.5, stale_after_seconds=30.0, reconcile_every_seconds=60.0,
                  cancel_poll_seconds=0.5, terminate_grace_seconds=3.0)


class SentFromTheLog:
    """What a console once sent after each command: the jobs now send it as they follow the event log, so each of
    these waits until they have sent what is recorded."""

    def __init__(self, handle: JobsHandle, verity: Verity) -> None:
        self.handle, self.verity = handle, verity

    def _sent(self, _: UUID) -> None:
        assert self.handle.wait_sent(self.verity.recorder.max_notification_id() or 0, timeout=30)

    launch = send_evaluation = send_loop_step = send_experiment_step = _sent


@dataclass
class Site:
    verity: Verity
    read_models: Any
    handle: SentFromTheLog
    jobs: SentFromTheLog
    org_id: UUID
    project_id: UUID

    def wait_for(self, read, done, timeout: float = 120.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = read()
            if done(value):
                return value
            time.sleep(0.3)
        raise AssertionError(f"timed out; last: {read()}")

    def evaluation(self, evaluation_id: UUID):
        return self.wait_for(lambda: self.verity.get_evaluation(None, evaluation_id),
                             lambda e: e.state not in ("queued", "running"))

    def loop(self, loop_id: UUID):
        return self.wait_for(lambda: self.verity.get_loop(None, loop_id), lambda loop: not loop.is_live, 480.0)

    def new_loop(self, name: str, target: float, give_up_after: int = 1, rl: dict | None = None,
                 benchmark_size: int = 16, max_rounds: int = 3, **advanced: Any) -> UUID:
        draft = run_body_from_api({"name": name, "training": {"rl": {**(rl or TINY), "reward": None},
                                                             "advanced": {**ADVANCED, **advanced}}})
        return self.verity.create_loop(
            self.org_id, self.project_id, name=name, benchmark="math_pairs_held_out", score_column="accuracy",
            target_percent=target, max_rounds=max_rounds, give_up_after=give_up_after, reclaim_storage=True,
            draft=draft, actor=OWNER, role="owner", benchmark_size=benchmark_size,
        ).id


def _tiny_model_dir() -> Path:
    from trainer.tiny_model import TINY_MODEL_VERSION, build_tiny_model

    target = Path(__file__).resolve().parents[2] / ".tiny-model" / f"v{TINY_MODEL_VERSION}-seed0"
    if not (target / "tiny_model.json").exists():
        build_tiny_model(target, seed=0)
    return target


@pytest.fixture(scope="module", name="site")
def site_fixture(tmp_path_factory) -> Iterator[Site]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("verity-data"))
    apply_migrations(settings)
    verity = build_application(settings)
    read_models = build_read_models(settings)
    runner = ProjectionRunner(verity, read_models)
    runner.start()
    org_id = verity.create_organization("Acme", "pro", OWNER).id
    project_id = verity.create_project(org_id, "Demo", str(_tiny_model_dir()), None, False, OWNER).id
    handle = start(settings, verity, read_models, config=FAST)
    sent = SentFromTheLog(handle, verity)
    try:
        yield Site(verity, read_models, sent, sent, org_id, project_id)
    finally:
        handle.stop()
        runner.stop()


def test_a_baseline_gives_a_run_its_reward_and_the_adapter_is_scored_against_it(site: Site):
    v = site.verity
    baseline_id = v.create_evaluation(site.org_id, site.project_id, name="Baseline", source=HELD_OUT,
                                      scoring=SCORING, main_metric="math_pairs", actor=OWNER,
                                      max_answer_tokens=16).id
    site.jobs.send_evaluation(baseline_id)
    baseline = site.evaluation(baseline_id)
    assert baseline.status == "Completed", baseline.failure
    assert set(baseline.breakdown) == {"score", "accuracy", "accuracy_strict", "format", "answered"}
    assert len(baseline.results) == 16

    body = {"name": "from the baseline", "baseline": str(baseline_id),
            "training": {"rl": {**TINY, "reward": None}, "advanced": ADVANCED}}
    run_id = v.save_run(site.org_id, site.project_id, run_body_from_api(body), OWNER).id
    reward = v.get_run(site.org_id, run_id).settings.reward
    assert (reward["metric"], reward["format_bonus"]) == ("math_pairs", True)  # the baseline's scoring
    v.launch_run(site.org_id, run_id, OWNER, "owner")
    site.handle.launch(run_id)
    # A full run that did all its rounds is Adapter ready for a moment on its way to Completed; one that stopped
    # early stays Adapter ready with its stop, which is an end too (and fails the assertion below, as it should).
    run = site.wait_for(lambda: v.get_run(None, run_id),
                        lambda r: r.state in ("completed", "failed") or (r.state == "adapter_ready" and r.stop))
    assert run.status == "Completed", (run.failure, run.stop)

    against_id = v.score_against_baseline(site.org_id, run_id, OWNER).id
    site.jobs.send_evaluation(against_id)
    assert site.evaluation(against_id).status == "Completed"
    site.read_models.wait_for(v.recorder.max_notification_id())
    compared = reads.comparison(site.read_models.tables, site.org_id, against_id)
    assert compared["baseline"]["id"] == str(baseline_id)
    assert compared["difference"] == pytest.approx(compared["adapter"]["score"] - baseline.score)
    assert len(compared["rows"]) == 16
    assert all(row["difference"] == pytest.approx(row["score"] - row["baseline_score"]) for row in compared["rows"])
    with _owner_client(site) as client:
        page = client.get(f"/evaluations/{against_id}").text
        shown = html.unescape(client.get(f"/evaluations/{baseline_id}").text)
    assert "Score against baseline" in page and " points" in page and "What is" in page
    assert f"{compared['difference'] * 100:+.1f} points" in page
    # 001's Evaluating an RLVR model: the overall score, then accuracy, accuracy strict, format and answered
    tiles = re.findall(r'data-tile="(\w+)"><span>([^<]+)</span><strong>([^<]+)</strong>', shown)
    assert [(key, label) for key, label, _ in tiles] == [
        ("score", "Overall score"), ("accuracy", "accuracy"), ("accuracy_strict", "accuracy strict"),
        ("format", "format"), ("answered", "answered")]  # 001's names, as its screenshot shows them
    assert tiles[0][2] == f"{baseline.score * 100:.1f}%"
    assert tiles[1][2] == f"{baseline.breakdown['accuracy'] * 100:.1f}%"


@contextmanager
def _owner_client(site: Site) -> Iterator[Any]:
    """A console client signed in as the organization's owner; closed (its app's lifespan ended) after the block."""
    from litestar.testing import TestClient

    from app.auth.testing import sign_in_as
    from app.factory import create_app

    with TestClient(create_app(site.verity, site.read_models)) as client:
        sign_in_as(client, site.verity, site.read_models, site.org_id, email="owner@acme.example", role="owner")
        yield client


def test_a_loop_that_learns_nothing_plateaus(site: Site):
    loop = site.loop(_started(site, site.new_loop("no gain", 99.0, learning_rate=1e-7)))
    assert loop.status == "Plateaued", loop.failure
    assert len(loop.rounds) == 2 and loop.best_round == 1  # give up after 1 round without real gain
    site.read_models.wait_for(site.verity.recorder.max_notification_id())
    with _owner_client(site) as client:
        page = client.get(f"/loops/{loop.id}").text
    assert "Plateaued" in page and "BEST" in page and "2 of 3" in page and 'data-round="2"' in page


@measured_on_intel_only("round 1 scored 48.4% at 7e-4 and rounds 2-4 48.4% at most (43.8%, 48.4%, 48.4%)")
def test_a_loop_of_three_rounds_reaches_a_target_just_above_its_first_round(site: Site):
    learning = {"rl": LEARNING_ROUND, "benchmark_size": 64, "learning_rate": 7e-4}
    # The trainer is seeded: the same settings score a first round the same. A one-round loop tells its score.
    probe = site.loop(_started(site, site.new_loop("one round", 99.0, 3, max_rounds=1, **learning)))
    assert probe.status == "Rounds spent" and len(probe.rounds) == 1, probe.failure
    first_score = probe.scores[0]

    # Just above round 1: only a later round that learns more reaches it. Round 2 takes the next seed, so it trains
    # on new Math Pairs problems from round 1's adapter. The numbers are the CPU's own (a machine with other vector
    # instructions rounds otherwise, and builds a slightly different tiny model): at 5e-4 with 24 steps a round,
    # 35.9%, 35.9%, then 43.8% on 64 problems on one AVX-512 Xeon, and 39.1%, 35.9%, 39.1% (never above round 1) on
    # an AMX one; at 7e-4 the AMX Xeon gave 37.5%, 34.4%, then 48.4%, with its own kernels and with AVX2's alike
    # (ATEN_CPU_CAPABILITY=avx2, MKL and oneDNN likewise); at 1e-3, 37.5%, 34.4%, 34.4%.
    target = first_score * 100 + 0.1
    loop = site.loop(_started(site, site.new_loop("to target", target, 3, max_rounds=3, **learning)))
    assert loop.status == "Target reached", (loop.status, loop.scores, target)
    assert loop.scores[0] == pytest.approx(first_score) and 2 <= len(loop.rounds) <= 3
    assert loop.best_round == len(loop.rounds)  # the round that reached the target is the best
    site.read_models.wait_for(site.verity.recorder.max_notification_id())
    rows = reads.loop_rounds(site.read_models.tables, loop.id)
    assert [r["is_best"] for r in rows].count(True) == 1
    with _owner_client(site) as client:
        page = html.unescape(client.get(f"/loops/{loop.id}").text)
    assert "Target reached" in page and f"{len(loop.rounds)} of 3" in page
    # 001's header: the best score with its gain over round 1, and the elapsed time of training and benchmarking
    assert f"{(max(loop.scores) - loop.scores[0]) * 100:+.1f} points from round 1" in page
    assert re.search(r'data-tile="elapsed"><span>Elapsed</span><strong>\d+(m \d\ds|s)</strong>', page)
    for number, (before, score) in enumerate(itertools.pairwise(loop.scores), start=2):  # delta to the previous
        row = page[page.index(f'<tr data-round="{number}">'):]
        row = row[:row.index("</tr>")]
        arrow = "▲" if score > before else "▼" if score < before else "="
        assert f"{arrow} {(score - before) * 100:+.1f}" in row and re.search(r"<td>\d+(m \d\ds|s)</td>", row)


def _started(site: Site, loop_id: UUID) -> UUID:
    site.jobs.send_loop_step(loop_id)
    return loop_id


def test_an_experiment_measures_the_base_model_trains_with_rl_and_compares(site: Site):
    v = site.verity
    experiment_id = v.create_experiment(
        site.org_id, site.project_id, name="RL on math pairs", actor=OWNER, role="owner", source=HELD_OUT,
        scoring=SCORING, main_metric="math_pairs", rl=TINY, advanced=ADVANCED, max_answer_tokens=16,
    ).id
    site.jobs.send_experiment_step(experiment_id)
    seen_rounds: set[str] = set()

    def read():
        view = reads.experiment(site.read_models.tables, site.org_id, experiment_id)
        if view and view["training_round"]:
            seen_rounds.add(view["training_round"])
        return v.get_experiment(None, experiment_id)

    experiment = site.wait_for(read, lambda x: not x.is_live, 180.0)
    assert experiment.status == "Completed", experiment.failure
    assert seen_rounds == {"Round 1 of 1"}  # while training, the experiment shows the round
    assert experiment.training_ended == "Completed"
    assert experiment.difference == pytest.approx(experiment.adapter_score - experiment.base_score)
    adapter_evaluation = v.get_evaluation(None, experiment.evaluation_id)
    assert adapter_evaluation.baseline_id == experiment.baseline_id and len(adapter_evaluation.results) == 16

    site.read_models.wait_for(v.recorder.max_notification_id())
    with _owner_client(site) as client:
        shown = client.get(f"/api/experiments/{experiment_id}").json()["experiment"]
        page = client.get(f"/experiments/{experiment_id}").text
    assert shown["status"] == "Completed" and shown["difference"] == pytest.approx(experiment.difference)
    assert "Reward: the evaluation&#39;s main metric (" in page or "Reward: the evaluation's main metric (" in page
    assert " points" in page and "Training ended: Completed" in page


# Returns text on one problem of the first batch and raises on one of the second (KeyError at line 5, quoting the
# answer); scores the others, so the third batch of 8 answers scores as usual.
FAILS_ON_TWO_PROBLEMS = '''def score(answer, reference):
    if reference == "{returns_text_on}":
        return "not a number"
    if reference == "{raises_on}":
        raise KeyError("the answer was " + answer)
    return float(answer.strip() == reference)
'''


def _custom_evaluation(site: Site, name: str, source: str, count: int) -> UUID:
    version_id = site.verity.register_custom_metric(site.org_id, name, source, OWNER).id
    evaluation_id = site.verity.create_evaluation(
        site.org_id, site.project_id, name=name, source={**HELD_OUT, "count": count},
        scoring={"preset": "qa", "custom_metric": str(version_id)}, main_metric=f"custom.{version_id}", actor=OWNER,
        max_answer_tokens=16,
    ).id
    site.jobs.send_evaluation(evaluation_id)
    return evaluation_id


def test_a_custom_metric_that_fails_on_an_answer_fails_its_batch_and_the_page_and_api_say_so(site: Site):
    from domain.evaluations.benchmarks import math_pairs_held_out_rows

    references = [row["reference"] for row in math_pairs_held_out_rows(24)]
    once = [i for i, reference in enumerate(references) if references.count(reference) == 1]
    text_row, raise_row = next(i for i in once if i < 8), next(i for i in once if 8 <= i < 16)
    source = FAILS_ON_TWO_PROBLEMS.format(returns_text_on=references[text_row], raises_on=references[raise_row])

    evaluation_id = _custom_evaluation(site, "fails_on_two", source, 24)

    evaluation = site.evaluation(evaluation_id)
    assert evaluation.status == "Completed", evaluation.failure  # the batches failed, not the evaluation
    site.read_models.wait_for(site.verity.recorder.max_notification_id())
    with _owner_client(site) as client:
        shown = client.get(f"/api/evaluations/{evaluation_id}").json()
        page = html.unescape(client.get(f"/evaluations/{evaluation_id}").text)
    results = shown["results"]
    assert not any(r["cut_off"] for r in results)  # so the batches are the examples 1-8, 9-16 and 17-24
    assert [r["failure"] is not None for r in results] == [True] * 16 + [False] * 8
    assert all(r["score"] == 0 for r in results[:16])
    assert results[text_row]["failure"] == "result"
    assert results[text_row]["metric_error"] == (
        "returned something that is not a number from 0 to 1: 'not a number'")
    assert results[raise_row]["failure"] == "execution"
    assert results[raise_row]["metric_error"].startswith("KeyError at line 5: 'the answer was ")  # in the results
    mate = results[raise_row + 1 if raise_row < 15 else 8]
    assert mate["metric_error"] == "Another answer of batch 2 failed: KeyError at line 5"
    assert shown["evaluation"]["metric_failures"]["failed"] == 16
    note = (
        "The custom metric failed on 16 of 24 answers (batch 1: returned something that is not a number from 0 to "
        "1; batch 2: KeyError at line 5). Those answers score 0; make the metric handle any text."
    )
    assert shown["evaluation"]["metric_failures_note"] == note  # the answer's text stays out of it
    assert evaluation.score == pytest.approx(sum(r["score"] for r in results) / 24)

    assert note in page
    assert page.count(">Metric failed</span>") == 16
    assert "Another answer of batch 1 failed: returned something that is not a number from 0 to 1" in page


def test_a_custom_metric_that_fails_on_every_answer_fails_the_evaluation_in_words(site: Site):
    evaluation_id = _custom_evaluation(
        site, "never_works", "def score(answer, reference):\n    return {}[answer]\n", 8)

    evaluation = site.evaluation(evaluation_id)

    assert evaluation.status == "Failed"
    assert evaluation.failure == (
        "The custom metric failed on all 8 answers (batch 1: KeyError at line 2), so the evaluation has no score. "
        "Make the metric handle any text."
    )
