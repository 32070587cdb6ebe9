"""A run's alarms (issue 21) as rounds arrive: each rule of domain/runs/alarms.py provoked by the rounds that make it
hold, recorded through the application as `Run.AlarmRaised` once while it stands, and `Run.AlarmCleared` once it no
longer holds; a healthy run raises none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest
from rounds import TINY_MODEL_ROUND

from domain.runs import alarms
from domain.runs.progress import RoundResult

if TYPE_CHECKING:
    from tests.domain.conftest import World

HEALTHY = {"reward": 0.40, "signal": 0.5, "cut_off": 0.0, "mean_answer_tokens": 20.0, "token_entropy": 1.0,
           "accuracy": 0.40}


def round_of(number: int, validation: float = 0.5, **figures: Any) -> RoundResult:
    """Round `number` of the tiny model: a healthy one, but for `figures`."""
    if number == 0:
        return RoundResult(0, validation, validation_seconds=1.0)
    return RoundResult(number, validation, **{**TINY_MODEL_ROUND, "updated": True, **HEALTHY, **figures})


def record(world: World, run_id: UUID, rounds: list[dict[str, Any]], start: int = 1) -> None:
    for number, figures in enumerate(rounds, start=start):
        world.verity.record_round_scored(run_id, round_of(number, **figures))


def started(world: World, **rl: Any) -> UUID:
    run_id = world.launched(rounds=30, **rl)
    world.verity.record_preparing(run_id)
    world.verity.record_round_scored(run_id, round_of(0))
    return run_id


def alarm_events(world: World, run_id: UUID) -> list[tuple[str, str, int]]:
    """(event, kind, round) of each alarm event of the run, in order."""
    return [
        (type(e).__name__, e.kind, e.round)  # type: ignore[attr-defined]
        for e in world.verity.events.get(run_id)
        if type(e).__name__ in ("AlarmRaised", "AlarmCleared")
    ]


def raised(world: World, run_id: UUID, kind: str) -> Any:
    [event] = [e for e in world.verity.events.get(run_id) if type(e).__name__ == "AlarmRaised" and e.kind == kind]
    return event


def test_a_healthy_run_raises_no_alarm(world: World) -> None:
    run_id = started(world)
    record(world, run_id, [{"reward": 0.40 + 0.02 * n, "accuracy": 0.40 + 0.02 * n} for n in range(12)])
    # validation follows the reward in a healthy run
    run_id_2 = started(world)
    for number in range(1, 13):
        figures = {"reward": 0.4 + 0.02 * number, "accuracy": 0.4 + 0.02 * number}
        world.verity.record_round_scored(run_id_2, round_of(number, 0.45 + 0.02 * number, **figures))
    assert alarm_events(world, run_id) == alarm_events(world, run_id_2) == []
    assert world.verity.get_run(None, run_id).alarms == {}


def test_reward_rising_while_validation_falls_raises_its_alarm_after_the_window(world: World) -> None:
    run_id = started(world)
    for number, (reward, validation) in enumerate(
        [(0.30, 0.50), (0.32, 0.50), (0.40, 0.49), (0.50, 0.48), (0.60, 0.48)], start=1
    ):
        world.verity.record_round_scored(run_id, round_of(number, validation, reward=reward, accuracy=reward))
        expected = {alarms.REWARD_WITHOUT_VALIDATION: 5} if number == alarms.ALARM_WINDOW else {}
        assert world.verity.get_run(None, run_id).alarms == expected
    event = raised(world, run_id, alarms.REWARD_WITHOUT_VALIDATION)
    assert event.seen == (
        "Reward rose from 0.31 to 0.55 over rounds 1-5 (first two rounds against last two) while validation "
        "reward went from 0.50 to 0.48."
    )
    assert event.title == "Reward rises, validation does not" and "Samples" in event.advice


def test_answers_growing_towards_longest_sampled_answer_raise_their_alarm(world: World) -> None:
    run_id = started(world, max_answer_tokens=64)
    record(world, run_id, [{"mean_answer_tokens": 20.0}, {"mean_answer_tokens": 35.0},
                           {"mean_answer_tokens": 55.0}])  # 55 >= 80% of 64, and growing
    assert alarm_events(world, run_id) == [("AlarmRaised", alarms.ANSWERS_GROWING, 3)]
    assert raised(world, run_id, alarms.ANSWERS_GROWING).seen.startswith(
        "Answers grew from 20 to 55 tokens on average over rounds 1-3, towards the Longest sampled answer of 64"
    )


def test_the_cut_off_share_climbing_raises_the_same_alarm(world: World) -> None:
    run_id = started(world)
    record(world, run_id, [{"cut_off": 0.0}, {"cut_off": 0.1}, {"cut_off": 0.3}])
    assert alarm_events(world, run_id) == [("AlarmRaised", alarms.ANSWERS_GROWING, 3)]
    assert "30% were cut off in round 3 (0% in round 1)." in raised(world, run_id, alarms.ANSWERS_GROWING).seen


def test_the_format_part_rising_while_the_correct_part_does_not_raises_its_alarm(world: World) -> None:
    """Math Pairs with its Format bonus (on by default): reward = 0.9 x correct + 0.1 x format."""
    run_id = started(world)
    assert world.verity.get_run(None, run_id).settings.reward["format_bonus"] is True
    shapes = [0.1, 0.2, 0.6, 0.9]
    record(world, run_id, [{"reward": 0.9 * 0.3 + 0.1 * shape, "accuracy": 0.3} for shape in shapes])
    assert alarm_events(world, run_id) == [("AlarmRaised", alarms.FORMAT_WITHOUT_CORRECT, 4)]  # 15% -> 40% by 3
    assert raised(world, run_id, alarms.FORMAT_WITHOUT_CORRECT).seen == (
        "The format part rose from 15% to 75% of answers over rounds 1-4 while the correct part went from 30% to 30%."
    )


def test_without_a_format_bonus_there_is_no_format_part_to_watch(world: World) -> None:
    run_id = started(world, reward={"preset": "verifiable", "metric": "math_pairs", "format_bonus": False})
    record(world, run_id, [{"reward": 0.9 * 0.3 + 0.1 * shape, "accuracy": 0.3} for shape in [0.1, 0.2, 0.6, 0.9]])
    assert alarm_events(world, run_id) == []


def test_the_policy_s_entropy_collapsing_raises_its_alarm(world: World) -> None:
    run_id = started(world)
    record(world, run_id, [{"token_entropy": 1.2}, {"token_entropy": 0.8}, {"token_entropy": 0.4},
                           {"token_entropy": 0.05}])
    assert alarm_events(world, run_id) == [("AlarmRaised", alarms.ENTROPY_COLLAPSE, 4)]
    assert raised(world, run_id, alarms.ENTROPY_COLLAPSE).seen == (
        "The policy's token entropy fell to 0.050 in round 4, from 1.200 at its highest (round 1)."
    )


def test_no_signal_for_three_rounds_in_a_row_raises_its_alarm_and_a_signal_clears_it(world: World) -> None:
    run_id = started(world)
    too_easy = {"signal": 0.0, "reward": 1.0, "accuracy": 1.0, "uniform_value": 1.0, "updated": False}
    record(world, run_id, [too_easy, too_easy])
    assert alarm_events(world, run_id) == []  # two rounds are not yet "several in a row"
    record(world, run_id, [too_easy, too_easy], start=3)
    assert alarm_events(world, run_id) == [("AlarmRaised", alarms.NO_SIGNAL, 3)]  # once, not again at round 4
    assert raised(world, run_id, alarms.NO_SIGNAL).seen == (
        "Rounds 1-3 had no signal: every answer to each prompt scored alike (mean reward 1.00: all right), so they "
        "taught nothing."
    )
    record(world, run_id, [{}], start=5)
    assert alarm_events(world, run_id)[-1] == ("AlarmCleared", alarms.NO_SIGNAL, 5)
    assert world.verity.get_run(None, run_id).alarms == {}
    record(world, run_id, [too_easy] * 3, start=6)  # it may stand again, later
    assert alarm_events(world, run_id)[-1] == ("AlarmRaised", alarms.NO_SIGNAL, 8)


def test_the_run_keeps_a_window_of_five_rounds_however_long_it_runs(world: World) -> None:
    run_id = started(world)
    record(world, run_id, [{}] * 25)
    watch = world.verity.get_run(None, run_id).alarm_watch
    assert [r["round"] for r in watch["rounds"]] == [21, 22, 23, 24, 25]
    assert watch["slowest_seconds"] == pytest.approx(5.0)


def test_the_quiet_alarm_needs_a_training_run_that_was_timed(world: World) -> None:
    run_id = world.launched()
    world.verity.record_preparing(run_id)
    world.verity.record_quiet(run_id, 999.0, "12:00:00 UTC")  # preparing: nothing to say yet
    world.verity.record_round_scored(run_id, round_of(0))  # 1 s of validation
    world.verity.record_quiet(run_id, 2.5, "12:00:00 UTC")
    assert world.verity.get_run(None, run_id).alarms == {}
    world.verity.record_quiet(run_id, 3.5, "12:00:00 UTC")
    world.verity.record_quiet(run_id, 9.5, "12:00:00 UTC")
    assert alarm_events(world, run_id) == [("AlarmRaised", alarms.QUIET, 0)]
    assert raised(world, run_id, alarms.QUIET).seen == (
        "No round and no heartbeat for 4 s (since 12:00:00 UTC), over 3 x its slowest round (1 s)."
    )
