"""A reward probe as the domain sees it: who may probe, what is refused in words, its states, the summary it keeps,
its row and its place in the feed, and the message the jobs send for it."""

from __future__ import annotations

from uuid import UUID

import pytest
from evaluation_helpers import OWNER, new_world
from probe_summaries import summary

from domain.errors import IllegalTransition, NotAllowed, PlanNeeded, SettingsInvalid
from jobs.dispatch_routes import PROBE, kind_of
from projections import probes as reads
from projections.runner import ProjectionRunner
from projections.store import memory_read_models

NUMERIC = {"preset": "numeric", "metric": "numeric_accuracy"}
MATH_PAIRS = {"kind": "math_pairs"}


def test_a_member_probes_a_reward_and_the_jobs_score_it():
    world = new_world()
    v = world.verity
    written = v.create_probe(world.org_id, world.project_id, name="numeric on math pairs", source=MATH_PAIRS,
                             reward=NUMERIC, actor=OWNER, role="member", prompts=2, answers_per_prompt=4,
                             max_answer_tokens=16)
    probe = v.get_probe(world.org_id, written.id)
    assert (probe.status, probe.reward["metric"], probe.source) == ("Queued", "numeric_accuracy", MATH_PAIRS)
    v.record_probe_sampling(written.id)
    with pytest.raises(IllegalTransition, match="at most 2 prompts"):
        v.record_probe_scored(written.id, summary(written.id, [True, False, True], prompts=3))
    v.record_probe_scored(written.id, summary(written.id, [True, False]))
    probe = v.get_probe(None, written.id)
    assert probe.status == "Scored" and probe.summary["varied_share"] == 0.5
    with pytest.raises(IllegalTransition):
        v.record_probe_failed(written.id, "too late")

    read_models = memory_read_models()
    ProjectionRunner(v, read_models).run_once()
    row = reads.probe(read_models.tables, world.org_id, written.id)
    assert row["status"] == "Scored" and row["reward_label"] == "Numeric accuracy · Numeric"
    assert row["verdict"]["headline"] == (
        "1 of 2 prompts have answers that differ: expect a usable signal; a run would learn from these prompts.")
    assert [p["index"] for p in reads.informative_prompts(row["summary"])] == [0, 1]
    feed = [e["event_type"] for e in read_models.tables.select("feed", {"org_id": str(world.org_id)})]
    assert feed[-3:] == ["Probe.Saved", "Probe.Sampling", "Probe.Scored"]
    saved = next(n for n in v.notification_log.select(start=1, limit=100) if n.topic.endswith("Probe.Saved"))
    assert kind_of(saved) == PROBE


def test_a_probe_needs_the_pro_plan_and_a_role_that_may_launch():
    world = new_world(plan="free")
    with pytest.raises(PlanNeeded, match="RL training is on the Pro plan"):
        world.verity.create_probe(world.org_id, world.project_id, name="", source=MATH_PAIRS, reward=NUMERIC,
                                  actor=OWNER, role="owner")
    world = new_world()
    with pytest.raises(NotAllowed, match="member or owner role"):
        world.verity.create_probe(world.org_id, world.project_id, name="", source=MATH_PAIRS, reward=NUMERIC,
                                  actor=OWNER, role="viewer")


def test_a_probe_is_refused_with_every_problem_in_words():
    world = new_world()
    with pytest.raises(SettingsInvalid) as refused:
        world.verity.create_probe(world.org_id, world.project_id, name="", source={"kind": "nothing"},
                                  reward=None, actor=OWNER, role="owner", prompts=0, answers_per_prompt=1,
                                  max_answer_tokens=8, adapter_run=UUID(int=1))
    assert set(refused.value.errors) == {"reward", "source", "prompts", "answers_per_prompt", "max_answer_tokens",
                                         "adapter_run"}
    assert refused.value.errors["reward"] == "Choose a reward for RL: the metric that scores each sampled answer."
    assert refused.value.errors["answers_per_prompt"] == "Answers per prompt must be a whole number from 2 to 64."


def test_a_probe_of_a_finished_runs_adapter_keeps_the_adapter():
    world = new_world()
    run_id = world.finished_run(training={"rl": {"rounds": 1, "reward": {
        "preset": "verifiable", "metric": "math_pairs"}}})
    written = world.verity.create_probe(world.org_id, world.project_id, name="", source=MATH_PAIRS, reward=NUMERIC,
                                        actor=OWNER, role="owner", adapter_run=run_id)
    probe = world.verity.get_probe(world.org_id, written.id)
    assert probe.adapter_run == run_id and probe.adapter["sha256"] and probe.name == "Reward probe"
