"""An agent's start_training (000): the baseline's main metric is always the reward, and the run is saved and
launched in one write, refused whole or recorded whole."""

from __future__ import annotations

from uuid import UUID

import pytest

from domain.access.roles import ROLE_NEEDED
from domain.actors import Actor
from domain.errors import NotAllowed, NotReady, SettingsInvalid
from domain.runs.commands import AGENT_NEEDS_BASELINE, PRO_PLAN_NEEDED
from domain.runs.settings import run_body_from_api

AGENT = Actor("token", "t-1", "token agent")
OWNER = Actor("person", "owner@localhost", "owner@localhost")
HELD_OUT = {"kind": "benchmark", "name": "math_pairs_held_out", "count": 8}


def _position(world) -> int:
    return world.verity.recorder.max_notification_id() or 0


def _baseline(world) -> UUID:
    v = world.verity
    baseline_id = v.create_evaluation(world.org_id, world.project_id, name="Baseline", source=HELD_OUT,
                                      scoring={"preset": "verifiable", "format_bonus": True},
                                      main_metric="math_pairs", actor=OWNER).id
    v.record_evaluation_started(baseline_id)
    v.record_evaluation_completed(baseline_id, 0.4, {"score": 0.4}, [])
    return baseline_id


def _agent_draft(baseline: UUID | None, kind: str = "full"):
    """What start_training sends: its five settings, no reward."""
    rl = {"rounds": 2, "prompts_per_round": 8, "answers_per_prompt": 4, "max_answer_tokens": 16, "start_run": None,
          "reward": None}
    return run_body_from_api({"kind": kind, "baseline": str(baseline) if baseline else None, "training": {"rl": rl}})


@pytest.mark.parametrize("kind", ["full", "trial"])
def test_the_reward_is_the_baseline_s_main_metric_and_the_run_is_saved_and_launched(world, kind):
    baseline = _baseline(world)
    written = world.verity.start_training(world.org_id, world.project_id, _agent_draft(baseline, kind), AGENT,
                                          "member")
    run = world.verity.get_run(world.org_id, written.id)
    assert run.state == "queued" and run.settings.kind == kind
    reward = run.settings.reward
    assert (reward["preset"], reward["metric"], reward["format_bonus"]) == ("verifiable", "math_pairs", True)
    events = list(world.verity.events.get(written.id))
    assert [type(e).__qualname__.rsplit(".", 1)[-1] for e in events] == ["Saved", "Launched"]
    assert all(e.actor == AGENT.to_dict() for e in events)  # the token saved it and launched it
    assert written.position == _position(world)


@pytest.mark.parametrize(("plan", "role", "words"), [("free", "owner", PRO_PLAN_NEEDED),
                                                      ("pro", "viewer", ROLE_NEEDED)])
def test_a_plan_or_a_role_that_may_not_launch_records_nothing(make_world, plan, role, words):
    world = make_world(plan=plan)
    baseline = _baseline(world)
    before = _position(world)
    with pytest.raises(NotAllowed) as refused:
        world.verity.start_training(world.org_id, world.project_id, _agent_draft(baseline), AGENT, role)
    assert refused.value.message == words
    assert _position(world) == before


def test_without_a_baseline_there_is_no_reward_to_take(world):
    before = _position(world)
    with pytest.raises(SettingsInvalid) as refused:
        world.verity.start_training(world.org_id, world.project_id, _agent_draft(None, "trial"), AGENT, "member")
    assert refused.value.errors == {"baseline": AGENT_NEEDS_BASELINE}
    assert _position(world) == before


def test_a_worker_that_cannot_train_it_refuses_the_start_with_its_words_and_records_nothing(world):
    baseline = _baseline(world)
    before = _position(world)
    asked: list[dict] = []

    def not_ready(settings: dict) -> str:
        asked.append(settings)
        return "The local worker has no GPU for this run."

    with pytest.raises(NotReady) as refused:
        world.verity.start_training(world.org_id, world.project_id, _agent_draft(baseline), AGENT, "member",
                                    readiness=not_ready)
    assert refused.value.message == "The local worker has no GPU for this run."
    assert asked[0].reward["metric"] == "math_pairs"  # asked of the settings it would save
    assert _position(world) == before
