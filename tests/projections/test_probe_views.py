"""Reward probes in the SQL read models (migrations 020 and 023): a cancelled probe's row says who cancelled it, its
timeline tells each event in words beside the runs', and a rebuild from the event store gives the same tables as the
live projections. On SQLite and on PostgreSQL."""

from __future__ import annotations

from domain.actors import Actor
from projections import probes as reads
from projections.rebuild import rebuild_all

OWNER = Actor("person", "owner@localhost", "owner@localhost")
MEMBER = Actor("person", "member@localhost", "Grace Hopper")


def test_a_cancelled_probe_in_its_row_its_timeline_and_a_rebuild(stack) -> None:
    v = stack.verity
    probe_id = v.create_probe(stack.org_id, stack.project_id, name="numeric", source={"kind": "math_pairs"},
                              reward={"preset": "numeric", "metric": "numeric_accuracy"}, actor=OWNER, role="owner",
                              prompts=16, answers_per_prompt=8).id
    v.record_probe_sampling(probe_id)
    v.cancel_probe(stack.org_id, probe_id, MEMBER, "member")
    stack.runner.run_once()

    row = reads.probe(stack.read_models.tables, stack.org_id, probe_id)
    assert (row["state"], row["status"], row["cancelled_by"], row["summary"]) == (
        "cancelled", "Cancelled", "Grace Hopper", None)
    assert [(e.event_type, e.actor_name, e.sentence) for e in stack.read_models.timeline(stack.org_id, probe_id)] == [
        ("Saved", "owner@localhost", "Probe “numeric” saved by owner@localhost: 16 prompts × 8 answers."),
        ("Sampling", "Trainer", "Sampling 16 prompts × 8 answers."),
        ("Cancelled", "Grace Hopper", "Cancelled by Grace Hopper."),
    ]

    live = stack.read_models.dump()
    assert rebuild_all(stack.settings) == v.recorder.max_notification_id()
    assert stack.read_models.dump() == live
