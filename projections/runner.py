"""Follows the event log and applies it to the read models, a page of events per transaction.

SQLite's recorder can't be subscribed to in eventsourcing 9.5, so on SQLite the runner polls the log; on
PostgreSQL it waits on the recorder's subscription (LISTEN/NOTIFY) and then reads the log in pages.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import Notification

from domain.application import Verity
from projections.base import Event
from projections.collector_pause import collector_pauses
from projections.event_decoding import EventDecoder, from_domain_event
from projections.log_pages import LogPages
from projections.store import ReadModels

PAGE_SIZE = 1000  # Verity.log_section_size must be at least this
POLL_SECONDS = 0.1
# eventsourcing 9.5's subscription reads the log before its LISTEN is active, so an event committed in that gap
# waits for the next one; on PostgreSQL a slow poll beside the subscription sweeps such events up.
SWEEP_SECONDS = 1.0
log = logging.getLogger(__name__)


def decode(verity: Verity, notification: Notification) -> Event:
    """One notification as the projections read it, through eventsourcing's mapper (catch-up uses the faster
    `EventDecoder`, which gives the same)."""
    return from_domain_event(notification.id, verity.mapper.to_domain_event(notification), notification.state)


class ProjectionRunner:
    def __init__(self, verity: Verity, read_models: ReadModels, page_size: int = PAGE_SIZE) -> None:
        if verity.log_section_size < page_size:
            raise ValueError("The application's log_section_size must be at least the runner's page size.")
        self.verity = verity
        self.read_models = read_models
        self.page_size = page_size
        self._log = LogPages(verity)
        self._decode = EventDecoder(verity.mapper)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._sweeper: threading.Thread | None = None
        self._subscription: Any = None
        self._lock = threading.Lock()

    def run_once(self, after_page: Callable[[int], None] | None = None) -> int:
        """Applies every pending event, a page per transaction; returns how many were applied. `after_page` is told
        the log's position reached after each page (a rebuild's progress)."""
        with self._lock:
            applied = 0
            position = self.read_models.position()
            while True:
                with collector_pauses.paused():
                    notifications = self._log.select(position + 1, self.page_size)
                    if not notifications:
                        return applied
                    self.read_models.apply([self._decode(n) for n in notifications])
                applied += len(notifications)
                position = notifications[-1].id
                if after_page is not None:
                    after_page(position)
                if len(notifications) < self.page_size:
                    return applied

    # --- following the log in the background ---------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping.clear()
        subscribable = type(self.verity.recorder).__module__.endswith("postgres")
        target = self._follow_subscription if subscribable else self._poll
        self._thread = threading.Thread(target=target, name="projection-runner", daemon=True)
        self._thread.start()
        if subscribable:
            self._sweeper = threading.Thread(target=self._sweep, name="projection-sweeper", daemon=True)
            self._sweeper.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._subscription is not None:
            self._subscription.stop()
        for thread in (self._thread, self._sweeper):
            if thread is not None:
                thread.join(timeout=10)
        self._thread = self._sweeper = None

    def _safely_run_once(self) -> int:
        try:
            return self.run_once()
        except Exception:  # a read model must never stop following: log, wait, try again
            log.exception("The projections failed to apply a page of events; trying again.")
            self._stopping.wait(1.0)
            return 0

    def _poll(self) -> None:
        while not self._stopping.is_set():
            if self._safely_run_once() == 0:
                self._stopping.wait(POLL_SECONDS)

    def _sweep(self) -> None:
        while not self._stopping.wait(SWEEP_SECONDS):
            self._safely_run_once()

    def _follow_subscription(self) -> None:
        while not self._stopping.is_set():
            self._safely_run_once()
            reached = self.read_models.position()
            try:
                with self.verity.recorder.subscribe(gt=reached) as subscription:
                    self._subscription = subscription
                    if self._stopping.is_set():
                        return
                    for notification in subscription:
                        if notification.id > reached:  # the rest of a page already applied is skipped for free
                            self._safely_run_once()
                            reached = self.read_models.position()
                        if self._stopping.is_set():
                            return
            except Exception:
                log.exception("The event-log subscription broke; subscribing again.")
                self._stopping.wait(1.0)
