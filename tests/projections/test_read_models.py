"""The console's views follow the event log: runs, run detail, rounds, samples, timeline and feed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain.application import Verity
from domain.errors import ConcurrentChange
from domain.runs.messages import KEPT_STARTING_ADAPTER
from domain.runs.settings import run_body_from_api
from migrations import apply_migrations
from projections.operations import operations_totals
from projections.rebuild import rebuild_all
from projections.runner import ProjectionRunner
from projections.store import memory_read_models
from verity.wiring import build_application, ensure_default_organization


def test_a_run_as_the_console_reads_it_from_the_in_memory_read_models(owner, round_result):
    verity = Verity(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    read_models = memory_read_models()
    org_id = verity.create_organization("Acme", "pro", owner).id
    project_id = verity.create_project(org_id, "Demo", "tiny-math", None, False, owner).id
    body = {
        "name": "math",
        "training": {"rl": {"rounds": 3, "reward": {"preset": "qa", "metric": "token_f1"}}},
    }
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), owner).id
    verity.launch_run(org_id, run_id, owner, "owner")
    verity.record_preparing(run_id)
    verity.record_round_scored(run_id, round_result(0, 0.47))
    verity.record_round_scored(run_id, replace(round_result(1, 0.40), failures_by_kind={"timeout": 1},
                                               sandbox_batches={"scored": 7, "timeout": 1},
                                               grading_seconds_median=0.0012, grading_seconds_p95=0.0305))
    written = verity.record_stopped(
        run_id, "metric_failures", "Custom metric m (v1) failed on 9 of 64 answers ..."
    )
    verity.record_adapter_ready(run_id, 0, f"runs/{run_id}/adapter", "ab" * 32, 2048)
    runner = ProjectionRunner(verity, read_models)
    assert runner.run_once() == 9
    assert read_models.wait_for(written.position, timeout=0.1)

    [row] = read_models.runs(org_id)
    assert (row.name, row.status_line, row.reward_label, row.rounds_done) == (
        "math",
        "Adapter ready",
        "Token F1 · Q&A",
        1,
    )
    detail = read_models.run(org_id, run_id)
    assert detail.ended == "Stopped after round 1 of 3: metric failures · best round 0"
    assert detail.stop_log_line == "RL stopped (metric_failures) after round 1 of 3; best round 0."
    assert detail.kept_starting_adapter == KEPT_STARTING_ADAPTER
    assert detail.adapter["size_bytes"] == 2048 and detail.note.startswith("Custom metric m")
    newest = read_models.rounds(org_id, run_id)[0]
    assert newest.log_line == (
        "Round 1 of 3: reward 0.4100, signal 62%, cut off 2%, 1 metric failure, updated, "
        "loss 0.0120, validation reward 0.4000 (best round 0); seconds: sampling 81.2, "
        "grading 2.1, update 64.0, validation 9.5."
    )
    assert (newest.failures_by_kind, newest.sandbox_batches, newest.sandbox_failed_batches) == (
        {"timeout": 1}, 8, {"timeout": 1}
    )
    assert (newest.grading_seconds_median, newest.grading_seconds_p95) == (0.0012, 0.0305)
    starting = read_models.rounds(org_id, run_id)[1]
    assert (starting.failures_by_kind, starting.sandbox_batches, starting.sandbox_failed_batches) == (None, None, None)
    assert (starting.grading_seconds_median, starting.grading_seconds_p95) == (None, None)
    totals = operations_totals(read_models.tables)
    assert totals.failures_by_kind == {"execution": 0, "result": 0, "timeout": 1, "memory": 0, "output": 0}
    assert totals.sandbox_batches == {"scored": 7, "execution": 0, "result": 0, "timeout": 1, "memory": 0, "output": 0}
    assert [s.path for s in read_models.samples(org_id, run_id)] == [
        f"runs/{run_id}/rollouts/round-001.jsonl"
    ]
    timeline = read_models.timeline(org_id, run_id)
    assert [entry.event_type for entry in timeline][:3] == ["Saved", "Launched", "Preparing"]
    assert timeline[1].sentence == "owner@localhost launched the run." and timeline[2].actor_name == "Trainer"
    feed = read_models.feed(org_id, after=2, limit=2)
    assert [entry.type for entry in feed] == ["Run.Saved", "Run.Launched"]
    assert read_models.run(verity.create_organization("Other", "pro", owner).id, run_id) is None


def scripted_history(stack, round_result, owner) -> int:
    """Several runs through every ending, with the projections catching up along the way; returns events."""
    v, org = stack.verity, stack.org_id
    for index in range(6):
        run_id = stack.save(name=f"run {index}", rounds=40)
        v.launch_run(org, run_id, owner, "member")
        v.record_queued(run_id)
        v.record_preparing(run_id)
        for number in range(0, 41 if index % 3 == 0 else 25):
            result = round_result(number, 0.3 + (number % 7) / 20)
            if number % 10 == 1:  # a custom metric's batch ran out of time: rounds 1, 11, 21 (and 31 of a long run)
                result = replace(result, failures_by_kind={"timeout": 1}, sandbox_batches={"scored": 3, "timeout": 1})
            v.record_round_scored(run_id, result)
            if number % 10 == 0:
                stack.runner.run_once()
        match index % 3:
            case 0:
                v.record_saving_adapter(run_id)
                best = v.get_run(org, run_id).best_round
                v.record_adapter_ready(run_id, best, f"runs/{run_id}/adapter", "ef" * 32, 4096 + index)
                v.record_completed(run_id)
            case 1:
                v.record_stopped(run_id, "time_limit", "")
                v.record_adapter_ready(run_id, v.get_run(org, run_id).best_round, "a", "0" * 64, 1)
            case 2:
                v.record_failed(run_id, "RuntimeError: training stopped; inspect logs")
                v.retry_run(org, run_id, owner)
                v.duplicate_run(org, run_id, owner)
    trial = stack.save(name="trial", kind="trial")
    v.launch_run(org, trial, owner, "owner")
    v.cancel_run(org, trial, owner)
    stack.runner.run_once()
    return v.recorder.max_notification_id()


def test_a_rebuild_equals_the_live_read_models_after_a_long_history(stack, round_result, owner):
    events = scripted_history(stack, round_result, owner)
    assert events > 200
    live = stack.read_models.dump()
    assert len(live["rounds"]) == 2 * 41 + 4 * 25 and len(live["timeline"]) > 200
    assert rebuild_all(stack.settings) == events
    assert stack.read_models.dump() == live
    assert stack.read_models.position() == events
    totals = operations_totals(stack.read_models.tables)
    timed_out = 2 * 4 + 4 * 3  # rounds 1, 11, 21 and 31 of the two long runs, 1, 11 and 21 of the four others
    assert totals.failures_by_kind == {"execution": 0, "result": 0, "timeout": timed_out, "memory": 0, "output": 0}
    assert totals.sandbox_batches["scored"] == 3 * timed_out and totals.sandbox_batches["timeout"] == timed_out


def test_the_runner_follows_the_log_in_the_background(stack, owner):
    stack.runner.start()
    written = stack.verity.launch_run(stack.org_id, stack.save(), owner, "owner")
    assert stack.read_models.wait_for(written.position, timeout=10)
    assert stack.read_models.run(stack.org_id, written.id).status_line == "Queued"
    stack.runner.stop()


def test_two_writers_of_one_run_on_one_store_never_both_win(stack, settings):
    run_id = stack.save()
    other = build_application(settings)
    mine, theirs = stack.verity.get_run(None, run_id), other.get_run(None, run_id)
    mine.launch({"kind": "person", "id": "a", "name": "A"})
    theirs.edit(theirs.settings, {"kind": "person", "id": "b", "name": "B"})
    stack.verity._save(mine)
    with pytest.raises(ConcurrentChange):
        other._save(theirs)
    other.close()


def test_migrations_and_the_default_organization_are_idempotent(stack):
    assert apply_migrations(stack.settings) == []
    assert ensure_default_organization(stack.settings, stack.verity) == (stack.org_id, stack.project_id)
    stack.runner.run_once()
    [project] = stack.read_models.projects(stack.org_id)
    assert (project.name, project.model) == ("Demo", str(stack.settings.tiny_model_dir))
    assert [org.plan for org in stack.read_models.organizations()] == ["pro"]
