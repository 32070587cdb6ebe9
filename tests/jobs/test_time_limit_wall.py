"""The trainer applies the domain's one time-limit rule, and importing it loads no event-store library: the wall
that keeps eventsourcing (and the rest of domain/) out of the trainer's process holds."""

from __future__ import annotations

import subprocess
import sys


def test_the_trainer_uses_the_domain_time_limit_rule_without_loading_the_event_store() -> None:
    probe = (
        "import sys, trainer.loop\n"
        "import domain.runs.time_limit as rule\n"
        "assert trainer.loop.may_start_round is rule.may_start_round\n"
        "assert trainer.loop.must_stop_running_round is rule.must_stop_running_round\n"
        "walled = ('eventsourcing', 'dramatiq', 'litestar', 'domain.runs.run', 'domain.application')\n"
        "print(','.join(sorted(m for m in walled if m in sys.modules)))"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert found == ""
