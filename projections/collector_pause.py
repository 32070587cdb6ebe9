"""Pausing Python's cyclic garbage collector while a catch-up page is read, decoded and applied.

A page of events makes tens of thousands of short-lived dicts, which reference counting frees; the cyclic
collector's passes over them cost ~4% of a catch-up (bench/events.py). The collector's switch is one for the whole
process, and each projection runner follows the log in a thread of its own, so the pauses are counted: the
collector is off while any page is in flight and on again after the last one, where it was on before the first.
A page taking its switch as it found it, alone, could leave the collector off when pages of two runners overlap,
or turn it back on under another runner's page."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CollectorPauses:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._in_flight = 0
        self._was_enabled = False

    @contextmanager
    def paused(self) -> Iterator[None]:
        with self._changed:
            if self._in_flight == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._in_flight += 1
        try:
            yield
        finally:
            with self._changed:
                self._in_flight -= 1
                if self._in_flight == 0:
                    if self._was_enabled:
                        gc.enable()
                    self._changed.notify_all()

    @contextmanager
    def between_pages(self) -> Iterator[None]:
        """Waits until no page is in flight and holds the next one off while its body runs: where an owner turns
        the collector off or on, or looks at its switch, without a page changing it under them."""
        with self._changed:
            self._changed.wait_for(lambda: self._in_flight == 0)
            yield


# One for the process, as the collector's switch is.
collector_pauses = CollectorPauses()
