"""The jobs' one rule for recording a domain command: a race or a database out of reach is tried again on fresh
state, a command that no longer applies changes nothing, any other refusal is raised at once, and after a while the
jobs give up with the last error."""

from __future__ import annotations

import pytest

from domain.errors import ConcurrentChange, IllegalTransition, NotFound
from jobs.retrying import record


def failing(*errors: Exception):
    """A command that raises each of `errors` in turn, then is recorded; `calls` counts its tries."""
    calls: list[int] = []

    def command() -> None:
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]

    return command, calls


def test_a_race_and_a_database_hiccup_are_tried_again_until_the_command_is_recorded() -> None:
    command, calls = failing(ConcurrentChange("raced"), OSError("database away"), ConcurrentChange("raced"))
    assert record(command, "run 1") is True
    assert len(calls) == 4


def test_a_command_that_no_longer_applies_changes_nothing() -> None:
    command, calls = failing(IllegalTransition("Only a running run can score a round: this one is Cancelled."))
    assert record(command, "run 1") is False
    assert len(calls) == 1


def test_any_other_refusal_is_raised_at_once() -> None:
    command, calls = failing(NotFound("There is no such run."))
    with pytest.raises(NotFound):
        record(command, "run 1")
    assert len(calls) == 1


def test_the_jobs_give_up_with_the_last_error_after_a_while() -> None:
    command, calls = failing(*[OSError("database away")] * 100)
    with pytest.raises(OSError, match="database away"):
        record(command, "run 1", give_up_after=0.5)
    assert 2 <= len(calls) < 10
