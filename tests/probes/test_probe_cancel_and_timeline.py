"""Cancel a probe, and its story in words: a member cancels a queued or a sampling probe (a viewer may not, and an
ended probe can't be), a score the jobs send afterwards is refused, and the probe's timeline and page tell what
happened, sentence by sentence."""

from __future__ import annotations

import re
from uuid import UUID

import pytest
from evaluation_helpers import OWNER, new_world
from probe_summaries import summary

from domain.actors import Actor
from domain.errors import IllegalTransition, NotAllowed
from projections import probes as reads
from projections.runner import ProjectionRunner
from projections.store import memory_read_models
from tests.probes.test_probes_domain import MATH_PAIRS, NUMERIC

ADA = Actor("person", "ada@example.com", "Ada Lovelace")


def refused(words: str) -> str:
    """The domain's refusal, word for word, as `pytest.raises` matches it."""
    return re.escape(words)


def probed(world, prompts: int = 2) -> UUID:
    return world.verity.create_probe(world.org_id, world.project_id, name="numeric on math pairs",
                                     source=MATH_PAIRS, reward=NUMERIC, actor=OWNER, role="member",
                                     prompts=prompts, answers_per_prompt=4, max_answer_tokens=16).id


def test_a_member_cancels_a_sampling_probe_and_its_late_score_is_refused():
    world = new_world()
    v = world.verity
    probe_id = probed(world)
    v.record_probe_sampling(probe_id)

    v.cancel_probe(world.org_id, probe_id, ADA, "member")

    probe = v.get_probe(world.org_id, probe_id)
    assert (probe.status, probe.summary, probe.is_live) == ("Cancelled", None, False)
    with pytest.raises(IllegalTransition, match=refused("Only a sampling probe can be scored: this one is Cancelled.")):
        v.record_probe_scored(probe_id, summary(probe_id, [True, False]))
    with pytest.raises(IllegalTransition,
                       match=refused("Only a queued or sampling probe can fail: this one is Cancelled.")):
        v.record_probe_failed(probe_id, "too late")
    with pytest.raises(IllegalTransition,
                       match=refused("Only a queued or sampling probe can be cancelled: this one is Cancelled.")):
        v.cancel_probe(world.org_id, probe_id, ADA, "owner")


def test_a_queued_probe_is_cancelled_before_the_jobs_take_it():
    world = new_world()
    probe_id = probed(world)
    world.verity.cancel_probe(world.org_id, probe_id, OWNER, "owner")
    with pytest.raises(IllegalTransition,
                       match=refused("Only a queued probe can start sampling: this one is Cancelled.")):
        world.verity.record_probe_sampling(probe_id)


def test_a_viewer_may_not_cancel_and_a_scored_probe_stays_scored():
    world = new_world()
    v = world.verity
    probe_id = probed(world)
    with pytest.raises(NotAllowed, match="Viewers can read everything but change nothing"):
        v.cancel_probe(world.org_id, probe_id, ADA, "viewer")
    v.record_probe_sampling(probe_id)
    v.record_probe_scored(probe_id, summary(probe_id, [True, False]))
    with pytest.raises(IllegalTransition,
                       match=refused("Only a queued or sampling probe can be cancelled: this one is Scored.")):
        v.cancel_probe(world.org_id, probe_id, OWNER, "owner")


def test_a_probes_timeline_tells_its_story_in_words():
    world = new_world()
    v = world.verity
    scored, failed, cancelled = probed(world, prompts=2), probed(world, prompts=2), probed(world, prompts=2)
    for probe_id in (scored, failed, cancelled):
        v.record_probe_sampling(probe_id)
    v.record_probe_scored(scored, summary(scored, [True, False]))
    v.record_probe_failed(failed, "The probe's dataset version no longer exists in this organization.")
    v.cancel_probe(world.org_id, cancelled, ADA, "member")

    read_models = memory_read_models()
    ProjectionRunner(v, read_models).run_once()

    def told(probe_id: UUID) -> list[tuple[str, str, str]]:
        return [(e.event_type, e.actor_name, e.sentence) for e in read_models.timeline(world.org_id, probe_id)]

    saved = ("Saved", "owner@localhost",
             "Probe “numeric on math pairs” saved by owner@localhost: 2 prompts × 4 answers.")
    sampling = ("Sampling", "Trainer", "Sampling 2 prompts × 4 answers.")
    assert told(scored) == [saved, sampling, (
        "Scored", "Trainer", "Scored: 1 of 2 prompts has answers that differ (usable signal).")]
    assert told(failed) == [saved, sampling, (
        "Failed", "Trainer", "Failed: The probe's dataset version no longer exists in this organization.")]
    assert told(cancelled) == [saved, sampling, ("Cancelled", "Ada Lovelace", "Cancelled by Ada Lovelace.")]
    row = reads.probe(read_models.tables, world.org_id, cancelled)
    assert (row["status"], row["cancelled_by"], row["live"], row["summary"]) == (
        "Cancelled", "Ada Lovelace", False, None)
    feed = [e["event_type"] for e in read_models.tables.select("feed", {"org_id": str(world.org_id)})]
    assert feed[-1] == "Probe.Cancelled"
