"""The views of drafts that are edited and deleted, of a run that starts from another, and of a custom reward: what
the Runs list, the run's detail, its timeline and the feed say, live and after a rebuild."""

from __future__ import annotations

from domain.custom_metrics import CustomMetric
from domain.runs.settings import run_body_from_api
from projections.rebuild import rebuild_all

EXACT_YEAR = "def score(answer, reference):\n    return 1.0 if reference in answer else 0.0\n"


def test_an_edited_then_deleted_draft_leaves_the_runs_list_and_its_history_stays(stack, owner):
    v, org = stack.verity, stack.org_id
    kept, deleted = stack.save(name="kept"), stack.save(name="to delete", rounds=3)
    v.edit_run(org, deleted, run_body_from_api({"name": "to delete", "training": {"rl": {
        "rounds": 5, "reward": {"preset": "verifiable", "metric": "math_pairs"}}}}), owner)
    v.delete_run(org, deleted, owner)
    stack.runner.run_once()

    assert [row.id for row in stack.read_models.runs(org)] == [kept]
    detail = stack.read_models.run(org, deleted)
    assert (detail.state, detail.status_line, detail.rounds_total, detail.live) == ("deleted", "Deleted", 5, False)
    sentences = [entry.sentence for entry in stack.read_models.timeline(org, deleted)]
    assert sentences[1:] == [
        "owner@localhost edited the draft “to delete”: Rounds.",
        "owner@localhost deleted the draft “to delete”: it left the Runs list; its history stays here.",
    ]
    feed = [(entry.type, entry.aggregate_id) for entry in stack.read_models.feed(org, after=0, limit=100)]
    assert ("Run.Edited", deleted) in feed and ("Run.Deleted", deleted) in feed


def test_a_custom_reward_is_named_by_its_metric_and_a_run_by_the_run_it_starts_from(stack, owner, round_result):
    v, org = stack.verity, stack.org_id
    v.register_custom_metric(org, "exact_year", EXACT_YEAR, owner)
    second = v.edit_custom_metric(org, CustomMetric.create_id(org, "exact_year"), EXACT_YEAR, owner).id
    years = {"name": "years", "kind": "trial", "training": {"rl": {"prompts_per_round": 16, "reward": {
        "preset": "qa", "metric": f"custom.{second}"}}}}
    run_id = v.save_run(org, stack.project_id, run_body_from_api(years), owner).id  # the same page as the metric

    source = stack.save(name="first adapter", rounds=1)
    v.launch_run(org, source, owner, "owner")
    v.record_preparing(source)
    v.record_round_scored(source, round_result(0, 0.3))
    v.record_round_scored(source, round_result(1, 0.4))
    v.record_saving_adapter(source)
    v.record_adapter_ready(source, 1, f"runs/{source}/adapter", "ab" * 32, 1234)
    continued = v.save_run(org, stack.project_id, run_body_from_api({"name": "continued", "training": {"rl": {
        "start_run": str(source), "reward": {"preset": "verifiable", "metric": "math_pairs"}}}}), owner).id
    events = stack.runner.run_once()

    [listed] = [row for row in stack.read_models.runs(org) if row.id == run_id]
    assert listed.reward_label == stack.read_models.run(org, run_id).reward_label == "exact_year (v2) · Q&A"
    assert stack.read_models.run(org, continued).start_run_name == "first adapter"
    assert stack.read_models.run(org, source).start_run_name == ""

    live = stack.read_models.dump()
    assert rebuild_all(stack.settings) == events  # one page: the catalog applies before the runs
    assert stack.read_models.dump() == live

