"""A run's alarms in the read models (issue 21): the run's detail shows the alarms standing, with the banner's words,
the timeline says each one raised and cleared in words, the feed carries its event, and a rebuild from the event
store gives the same alarms as the live projections. On SQLite and on PostgreSQL."""

from __future__ import annotations

from typing import Any

from rounds import TINY_MODEL_ROUND

from domain.actors import Actor
from domain.runs import alarms
from domain.runs.progress import RoundResult
from projections.rebuild import rebuild_all

OWNER = Actor("person", "owner@localhost", "owner@localhost")
TOO_EASY = {"signal": 0.0, "reward": 1.0, "uniform_value": 1.0, "updated": False}


def round_of(number: int, **figures: Any) -> RoundResult:
    if number == 0:
        return RoundResult(0, 0.5, validation_seconds=1.0)
    healthy = {"reward": 0.4, "signal": 0.5, "updated": True, "token_entropy": 1.0, "mean_answer_tokens": 6.0}
    return RoundResult(number, 0.5, **{**TINY_MODEL_ROUND, **healthy, **figures})


def test_alarms_stand_in_the_run_detail_timeline_and_feed_and_a_rebuild_gives_the_same(stack) -> None:
    run_id = stack.save(rounds=10)
    v = stack.verity
    v.launch_run(stack.org_id, run_id, OWNER, "owner")
    v.record_preparing(run_id)
    v.record_round_scored(run_id, round_of(0))
    for number in (1, 2, 3):  # the prompt set is all too easy: no signal three rounds in a row
        v.record_round_scored(run_id, round_of(number, **TOO_EASY))
    v.record_round_scored(run_id, round_of(4))  # a signal: the alarm clears
    v.record_round_scored(run_id, round_of(5, token_entropy=0.1))  # and the entropy collapses
    stack.runner.run_once()

    run = stack.read_models.run(stack.org_id, run_id)
    assert [(a["kind"], a["round"], a["title"]) for a in run.alarms] == [
        (alarms.ENTROPY_COLLAPSE, 5, "The policy's entropy is collapsing")
    ]
    [standing] = run.alarms
    assert standing["seen"] == (
        "The policy's token entropy fell to 0.100 in round 5, from 1.000 at its highest (round 1)."
    )
    assert standing["advice"] == alarms.ADVICE[alarms.ENTROPY_COLLAPSE] and standing["at"]

    lines = [(e.event_type, e.sentence) for e in stack.read_models.timeline(stack.org_id, run_id)
             if e.event_type.startswith("Alarm")]
    assert [kind for kind, _ in lines] == ["AlarmRaised", "AlarmCleared", "AlarmRaised"]
    assert lines[0][1].startswith("Alarm after round 3 — No learning signal: Rounds 1-3 had no signal: every answer")
    assert lines[1][1] == "The alarm “No learning signal” cleared after round 4: it no longer holds."
    assert lines[2][1].startswith("Alarm after round 5 — The policy's entropy is collapsing: The policy's token")

    feed = [e for e in stack.read_models.feed(stack.org_id, 0, 1000) if e.type.startswith("Run.Alarm")]
    assert [(e.type, e.data["kind"], e.data["round"]) for e in feed] == [
        ("Run.AlarmRaised", alarms.NO_SIGNAL, 3), ("Run.AlarmCleared", alarms.NO_SIGNAL, 4),
        ("Run.AlarmRaised", alarms.ENTROPY_COLLAPSE, 5),
    ]
    assert feed[0].data["seen"].startswith("Rounds 1-3 had no signal") and feed[0].actor["name"] == "Trainer"

    live = stack.read_models.dump()
    events = v.recorder.max_notification_id()
    assert rebuild_all(stack.settings) == events
    assert stack.read_models.dump() == live
    assert stack.read_models.run(stack.org_id, run_id).alarms == run.alarms
