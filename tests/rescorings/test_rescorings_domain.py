"""A re-scoring as the domain sees it: what may be re-scored and by whom, what is refused in words, its states, the
summary it keeps, its row and its place in the feed, and the message the jobs send for it."""

from __future__ import annotations

from uuid import UUID, uuid4

import pytest
from evaluation_helpers import OWNER, new_world
from probe_summaries import summary as probe_summary

from domain.errors import IllegalTransition, NotAllowed, PlanNeeded, SettingsInvalid
from domain.rescorings.summary import answers_key
from jobs.dispatch_routes import RESCORING, kind_of
from jobs.rescorings import stored_answers
from projections import rescorings as reads
from projections.runner import ProjectionRunner
from projections.store import memory_read_models

MATH_PAIRS = {"preset": "verifiable", "metric": "math_pairs"}
EXACT = {"preset": "qa", "metric": "exact_match"}


def summary(rescoring_id: UUID, rounds: list[int]) -> dict:
    count = len(rounds)
    return {
        "answers": 8 * count, "graded": 8 * count, "moved": 2 * count, "moved_share": 0.25, "raised": count,
        "lowered": count, "mean_old": 0.5, "mean_new": 0.5, "groups": 2 * count, "gained_signal": 1,
        "lost_signal": 0, "gained": [{"round": rounds[0], "prompt": 1}], "lost": [], "metric_failures": 0,
        "failures_by_kind": {}, "sandbox_batches": None, "missing_rounds": [],
        "answers_key": answers_key(str(rescoring_id)),
        "per_round": {"round": rounds, "groups": [2] * count, "answers": [8] * count, "moved": [2] * count,
                      "signal_old": [0.5] * count, "signal_new": [1.0] * count, "mean_old": [0.5] * count,
                      "mean_new": [0.5] * count},
    }


def finished_run(world) -> UUID:
    return world.finished_run(training={"rl": {"rounds": 1, "reward": MATH_PAIRS}})


def test_a_member_rescores_a_finished_run_and_the_jobs_score_it():
    world = new_world()
    v = world.verity
    run_id = finished_run(world)
    written = v.create_rescoring(world.org_id, source={"kind": "run", "id": str(run_id)}, reward=EXACT,
                                 actor=OWNER, role="member")
    rescoring = v.get_rescoring(world.org_id, written.id)
    assert (rescoring.status, rescoring.rounds, rescoring.reward["metric"]) == ("Queued", [1], "exact_match")
    assert rescoring.old_reward["metric"] == "math_pairs" and rescoring.name == "math re-scored"
    assert [(f.round, f.key) for f in stored_answers(rescoring)] == [(1, f"runs/{run_id}/rollouts/round-001.jsonl")]
    v.record_rescoring_scoring(written.id)
    with pytest.raises(IllegalTransition, match="can't report round 2"):
        v.record_rescoring_scored(written.id, summary(written.id, [2]))
    v.record_rescoring_scored(written.id, summary(written.id, [1]))
    assert v.get_rescoring(None, written.id).summary["per_round"]["signal_new"] == [1.0]
    with pytest.raises(IllegalTransition):
        v.record_rescoring_failed(written.id, "too late")

    read_models = memory_read_models()
    ProjectionRunner(v, read_models).run_once()
    row = reads.rescoring(read_models.tables, world.org_id, written.id)
    assert row["status"] == "Scored" and row["reward_label"] == "Exact match · Q&A"
    assert row["old_reward_label"] == "Math Pairs · Verifiable" and row["source_page"] == f"/runs/{run_id}"
    assert reads.per_round(row["summary"])[0]["signal_old"] == 0.5
    assert [r["id"] for r in reads.rescorings(read_models.tables, world.org_id)] == [str(written.id)]
    feed = [e["event_type"] for e in read_models.tables.select("feed", {"org_id": str(world.org_id)})]
    assert feed[-3:] == ["Rescoring.Saved", "Rescoring.Scoring", "Rescoring.Scored"]
    saved = next(n for n in v.notification_log.select(start=1, limit=200) if n.topic.endswith("Rescoring.Saved"))
    assert kind_of(saved) == RESCORING


def test_a_scored_probe_is_rescored_from_its_answers_file():
    world = new_world()
    v = world.verity
    probe = v.create_probe(world.org_id, world.project_id, name="numeric", source={"kind": "math_pairs"},
                           reward={"preset": "numeric", "metric": "numeric_accuracy"}, actor=OWNER, role="owner")
    source = {"kind": "probe", "id": str(probe.id)}
    with pytest.raises(SettingsInvalid) as refused:
        v.create_rescoring(world.org_id, source=source, reward=EXACT, actor=OWNER, role="owner")
    assert refused.value.errors == {"source": "Re-score a scored probe: this one is Queued."}

    v.record_probe_sampling(probe.id)
    v.record_probe_scored(probe.id, {**probe_summary(probe.id, [True, False]), "answers_per_prompt": 8,
                                     "answers": 16, "graded": 16, "histogram": [14, 0, 0, 0, 0, 0, 0, 0, 0, 2]})
    written = v.create_rescoring(world.org_id, source=source, reward=EXACT, actor=OWNER, role="owner")
    rescoring = v.get_rescoring(world.org_id, written.id)
    assert [(f.round, f.key) for f in stored_answers(rescoring)] == [(1, f"probes/{probe.id}/answers.jsonl")]


def test_a_rescoring_needs_the_pro_plan_and_a_role_that_may_launch():
    world = new_world(plan="free")
    with pytest.raises(PlanNeeded):
        world.verity.create_rescoring(world.org_id, source={"kind": "run", "id": str(uuid4())}, reward=EXACT,
                                      actor=OWNER, role="owner")
    world = new_world()
    with pytest.raises(NotAllowed, match="member or owner role"):
        world.verity.create_rescoring(world.org_id, source={"kind": "run", "id": str(finished_run(world))},
                                      reward=EXACT, actor=OWNER, role="viewer")


def test_a_rescoring_is_refused_with_its_problems_in_words():
    world = new_world()
    v = world.verity
    with pytest.raises(SettingsInvalid) as refused:
        v.create_rescoring(world.org_id, source={"kind": "nothing"}, reward=None, actor=OWNER, role="owner")
    assert refused.value.errors == {
        "reward": "Choose a reward for RL: the metric that scores each sampled answer.",
        "source": "Choose the answers to re-score: a finished run of this organization, or a scored probe."}
    run_id = finished_run(world)
    with pytest.raises(SettingsInvalid) as refused:  # the reward its answers were scored with
        v.create_rescoring(world.org_id, source={"kind": "run", "id": str(run_id)}, reward=MATH_PAIRS,
                           actor=OWNER, role="owner")
    assert refused.value.errors == {"reward": "That is the reward these answers were scored with. Choose another "
                                              "reward."}
    draft = world.full_run(training={"rl": {"rounds": 1, "reward": MATH_PAIRS}})
    with pytest.raises(SettingsInvalid) as refused:
        v.create_rescoring(world.org_id, source={"kind": "run", "id": str(draft)}, reward=EXACT, actor=OWNER,
                           role="owner")
    assert refused.value.errors == {"source": "Re-score a finished run: this one is Draft."}
    other = v.create_organization("Other", "pro", OWNER).id  # another organization's run is not found from it
    with pytest.raises(SettingsInvalid) as refused:
        v.create_rescoring(other, source={"kind": "run", "id": str(run_id)}, reward=EXACT, actor=OWNER,
                           role="owner")
    assert refused.value.errors == {"source": "There is no such run in this organization."}
