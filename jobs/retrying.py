"""One rule for recording a domain command from the jobs: try it until it is recorded, for up to a minute.

A command races other writers (a cancel, the reconciler, another worker's record) and sometimes a database that is
out of reach for a moment. Either way it is tried again on the state as it is then (the command rereads it), after
a pause that grows; a command that no longer applies (IllegalTransition: the run was cancelled meanwhile, or the
record repeats one already recorded) changes nothing. Every other refusal of the domain is raised at once: trying
again would only be refused again. After `GIVE_UP_AFTER_SECONDS` the last error is raised, and whoever called says
what it means (the supervisor stops the trainer; an actor's message ends with the error in the worker's log).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from domain.errors import ConcurrentChange, DomainError, IllegalTransition

log = logging.getLogger(__name__)

GIVE_UP_AFTER_SECONDS = 60.0
FIRST_PAUSE_SECONDS = 0.05
LONGEST_PAUSE_SECONDS = 10.0


def pause_before(attempt: int) -> float:
    """0.05 s before the second try, doubling up to 10 s: a race clears at once, an outage gets time."""
    return min(FIRST_PAUSE_SECONDS * 2**attempt, LONGEST_PAUSE_SECONDS)


def record(command: Callable[[], object], what: str, *, give_up_after: float = GIVE_UP_AFTER_SECONDS) -> bool:
    """Runs `command` until it is recorded: True once it is, False when it no longer applies. `what` names it in
    the log ("run 1f2e…: round_scored")."""
    deadline = time.monotonic() + give_up_after
    attempt = 0
    while True:
        try:
            command()
            return True
        except IllegalTransition as refusal:
            log.info("%s: %s", what, refusal.message)
            return False
        except ConcurrentChange as error:
            problem, transient = error, False
        except DomainError:
            raise
        except Exception as error:
            problem, transient = error, True
        pause = pause_before(attempt)
        if time.monotonic() + pause > deadline:
            raise problem
        if transient:
            log.exception("%s: could not be recorded now; trying again in %.1f s", what, pause)
        time.sleep(pause)
        attempt += 1
