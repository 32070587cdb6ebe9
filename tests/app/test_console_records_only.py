"""The console records commands and nothing else: it is built with no launcher, merger or evaluation sender, and it
imports none of the jobs (they follow the event log and send the work, jobs/dispatcher.py). That a run launched
through its API still trains end to end is tests/e2e/test_embedded.py's story."""

from __future__ import annotations

import inspect
import subprocess
import sys

from app.factory import create_app


def test_the_console_is_built_with_nothing_that_sends_work() -> None:
    taken = set(inspect.signature(create_app).parameters)
    assert taken == {"verity", "read_models", "runner", "storage", "auth", "debug"}


def test_the_web_app_imports_none_of_the_jobs() -> None:
    probe = (
        "import sys, app.factory, app.server\n"
        "print(','.join(sorted(m for m in sys.modules if m == 'jobs' or m.startswith('jobs.'))))"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert found == ""
