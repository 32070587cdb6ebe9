"""A run's alarms as events: raised when a rule of domain/runs/alarms.py starts to hold, cleared when it no longer
does, so the timeline, the feed and a poller of the API each see them (issue 21).

A mixin of the Run aggregate (domain/runs/run.py), like RunProgress: the checks are here, the `@event` methods
(`Run.AlarmRaised`, `Run.AlarmCleared`) are declared on the Run and only assign. An alarm of a kind is raised once
while it stands: not again every round it still holds. The round rules are read after each scored round
(`sound_alarms`, called by `score_round`); a quiet run is the reconciler's to report (`report_quiet`), and the next
round clears it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain.runs import alarms
from domain.runs.alarms import Alarm
from domain.runs.run_settings import RunSettings
from domain.runs.states import TRAINING

Recorder = Callable[..., None]


class RunAlarms:
    # provided by Run
    state: str
    settings: RunSettings
    latest_round: dict[str, Any] | None
    alarm_watch: dict[str, Any]
    alarms: dict[str, int]  # the alarms standing: kind -> the round it was raised after
    _alarm_raised: Recorder
    _alarm_cleared: Recorder

    def sound_alarms(self, actor: dict[str, str]) -> None:
        """After a scored round: raise each round rule that holds and stands not yet, clear each standing alarm that
        no longer holds (a quiet run's too: a round came)."""
        assert self.latest_round is not None
        number = self.latest_round["round_number"]
        format_bonus = bool((self.settings.reward or {}).get("format_bonus"))
        holding = {
            alarm.kind: alarm
            for alarm in alarms.round_alarms(self.alarm_watch, self.settings.max_answer_tokens, format_bonus)
        }
        for kind in [kind for kind in self.alarms if kind not in holding]:
            self._alarm_cleared(kind=kind, round=number, actor=actor)
        for kind, alarm in holding.items():
            if kind not in self.alarms:
                self._raise(alarm, number, actor)

    def report_quiet(self, quiet_seconds: float, since: str, actor: dict[str, str], at_least: float = 0.0) -> bool:
        """No round and no heartbeat for `quiet_seconds` (since `since`, in words), as the reconciler reads its
        ledger: the alarm when that is past the rule's limit (and `at_least`) and the run trains. True when it was
        raised now."""
        if self.state != TRAINING or alarms.QUIET in self.alarms:
            return False
        alarm = alarms.quiet_alarm(quiet_seconds, self.alarm_watch["slowest_seconds"], since, at_least)
        if alarm is None:
            return False
        self._raise(alarm, self.latest_round["round_number"] if self.latest_round else 0, actor)
        return True

    def _raise(self, alarm: Alarm, number: int, actor: dict[str, str]) -> None:
        self._alarm_raised(
            kind=alarm.kind, round=number, title=alarm.title, seen=alarm.seen, advice=alarm.advice, actor=actor
        )
