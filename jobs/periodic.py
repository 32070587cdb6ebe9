"""A daemon thread that does one thing every few seconds until stopped: the reconciler's passes, the embedded
worker's heartbeat. A failed turn is logged and the next one tries again (a database hiccup passes)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    def __init__(self, name: str, every: float, action: Callable[[], object], failure: str) -> None:
        self.every, self.action, self.failure = every, action, failure
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def start(self) -> Periodic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.action()
            except Exception:  # the next turn tries again
                log.exception(self.failure)
