"""The Prompts tab's read models (projections/prompts.py): each prompt's history row agrees with its draws, and a
rebuild from the event store gives the same rows as the live projection that followed the rounds as they came."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from rounds import prompts_of_round

from domain.runs.prompt_verdicts import draw_passed, tally_of
from projections.rebuild import rebuild_all

PROMPT_TABLES = ("prompt_rounds", "prompt_histories", "prompt_costs")


def test_a_rebuild_gives_the_same_prompt_histories_as_the_live_projection(stack, round_result, owner):
    rng = random.Random(21)
    v, org = stack.verity, stack.org_id
    runs = []
    for name, rounds in (("long", 30), ("old", 3)):
        run_id = stack.save(name=name, rounds=rounds)
        v.launch_run(org, run_id, owner, "owner")
        v.record_preparing(run_id)
        v.record_round_scored(run_id, round_result(0, 0.3))
        for number in range(1, rounds + 1):
            # the "old" run's rounds were recorded before rounds had prompts: they have none
            prompts = prompts_of_round(rng, 40, 8, 4) if name == "long" else None
            v.record_round_scored(run_id, replace(round_result(number, 0.3), prompts=prompts))
            if number % 7 == 0:
                stack.runner.run_once()  # the live projection follows a few rounds at a time
        runs.append(run_id)
    events = v.recorder.max_notification_id()
    stack.runner.run_once()
    live = {table: rows for table, rows in stack.read_models.dump().items() if table in PROMPT_TABLES}
    assert len(live["prompt_rounds"]) == 30 * 8 and len(live["prompt_costs"]) == 30
    assert not stack.read_models.prompt_histories(org, runs[1])

    histories = stack.read_models.prompt_histories(org, runs[0])
    draws = stack.read_models.prompt_draws(org, runs[0])
    assert sum(h.draws for h in histories) == 30 * 8 and {h.prompt_index for h in histories} == set(draws)
    for history in histories:
        tally = tally_of((draw_passed(d.pass_share), d.taught) for d in draws[history.prompt_index])
        assert (history.verdict, history.draws, history.taught_draws) == (tally.verdict, tally.draws, tally.taught)
        assert history.last_round == draws[history.prompt_index][-1].round_number
    assert len({h.verdict for h in histories}) >= 4
    costs = stack.read_models.prompt_costs(org, runs[0])
    assert sum(c.cost.dead_seconds for c in costs) == pytest.approx(sum(h.dead_seconds for h in histories))

    assert rebuild_all(stack.settings) == events
    rebuilt = {table: rows for table, rows in stack.read_models.dump().items() if table in PROMPT_TABLES}
    assert rebuilt == live
