"""A rebuild of the read models says how far it got: after each page of events (a transaction), the log's position
reached and the last event's; `verity projections rebuild` prints it every few seconds, and its time at the end."""

from __future__ import annotations

import re

from click.testing import CliRunner

import verity.cli
from projections.rebuild import rebuild_all
from projections.runner import ProjectionRunner
from verity.cli import main


def history(stack, round_result, owner, rounds: int = 30) -> int:
    """A launched run with `rounds` rounds scored; → the log's last position."""
    run_id = stack.save(rounds=rounds)
    stack.verity.launch_run(stack.org_id, run_id, owner, "owner")
    stack.verity.record_preparing(run_id)
    for number in range(rounds + 1):
        stack.verity.record_round_scored(run_id, round_result(number, 0.1 + number / 100))
    return stack.verity.recorder.max_notification_id()


def test_the_runner_tells_the_position_after_each_page_and_a_rebuild_the_last_event(stack, round_result,
                                                                                    owner) -> None:
    last = history(stack, round_result, owner)
    assert last > 30
    reached: list[int] = []
    assert ProjectionRunner(stack.verity, stack.read_models, page_size=10).run_once(reached.append) == last
    assert reached == sorted({*range(10, last, 10), last})  # a page of 10 at a time, the last one short
    live = stack.read_models.dump()

    told: list[tuple[int, int]] = []
    assert rebuild_all(stack.settings, lambda position, end: told.append((position, end))) == last
    assert told == [(last, last)]  # the history is one page of the rebuild's (1,000 events)
    assert stack.read_models.dump() == live


def test_the_rebuild_command_prints_its_progress_and_its_time(stack, monkeypatch, round_result, owner) -> None:
    last = history(stack, round_result, owner)
    monkeypatch.setenv("VERITY_DATA_DIR", str(stack.settings.data_dir))
    database = stack.settings.postgres
    if database is None:
        monkeypatch.delenv("VERITY_DATABASE_URL", raising=False)
    else:
        monkeypatch.setenv("VERITY_DATABASE_URL",
                           f"postgresql://{database.user}@{database.host}:{database.port}/{database.dbname}")
    monkeypatch.setattr(verity.cli, "PROGRESS_SECONDS", 0.0)  # after every page, not every 2 s: the log is one page

    said = CliRunner().invoke(main, ["projections", "rebuild"])
    assert said.exit_code == 0, said.output
    progress, done = said.output.strip().splitlines()
    assert re.fullmatch(rf"Rebuilding the read models: event {last} of {last} \([\d,]+ a second, about 0 s left\)\.",
                        progress), progress
    assert re.fullmatch(rf"Rebuilt the read models from {last} event\(s\) in \d+\.\d s\.", done), done
    assert stack.read_models.position() == last and len(stack.read_models.dump()["rounds"]) == 31
