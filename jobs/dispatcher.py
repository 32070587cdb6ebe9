"""The jobs follow the event log: the console records commands and nothing else, and the dispatcher sends the
message each recorded event asks for (jobs/dispatch_routes.py says which).

Like a projection it reads the notification log in order from the position it recorded, and records the position
it reached (jobs/dispatch_log.py); unlike one it records it after sending, so a crash between the two sends a
message again, and every actor acts only where its work still applies (jobs/actors.py).

Where it runs: in every process that runs the jobs, the web process beside the projection runner and each `verity
worker` (jobs/service.py, jobs/worker.py). The web process is where people's commands are recorded; the workers
record the steps of loops and experiments and go on where no console is up. The lock on the position's row makes
one of them send at a time, so each message goes once however many run.

On the embedded default the queue lives in this process's memory, so a message counts as sent for a restart only
once the worker has finished it: the recorded `position` stays before the oldest evaluation or step still waiting
in memory, and a restart sends those again (a lost launch is the reconciler's at start-up, a lost merge ends in
words: jobs/service.py).
"""

from __future__ import annotations

import logging
import threading

from eventsourcing.persistence import Notification

from domain.application import Verity
from jobs.dispatch_log import DispatchLog, Held, Reached
from jobs.dispatch_routes import NOTHING_ELSE_RESENDS, NotSentNow, Outbox, Routes, kind_of

log = logging.getLogger(__name__)

PAGE_SIZE = 500  # Verity.log_section_size must be at least this
POLL_SECONDS = 0.2
TRY_AGAIN_SECONDS = 2.0


class Dispatcher:
    def __init__(self, verity: Verity, outbox: Outbox, dispatch_log: DispatchLog, *, in_memory: bool = False) -> None:
        """`in_memory`: the broker's queues live in this process (the embedded default's), so the position a
        restart resumes from waits for the worker to finish a message (`finished`)."""
        if verity.log_section_size < PAGE_SIZE:
            raise ValueError("The application's log_section_size must be at least the dispatcher's page size.")
        self.verity, self.dispatch_log, self.in_memory = verity, dispatch_log, in_memory
        self.routes = Routes(verity, outbox)
        self._cursor: int | None = None  # in memory: how far this process sent
        self._unfinished: dict[str, int] = {}  # in memory: message id -> the position of its event
        self._sent_to = 0  # how far the dispatchers got, as this process last saw it
        self._lock = threading.Lock()  # one pass at a time in this process
        self._changed = threading.Condition()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._recorded_position: int | None = None  # what this process last recorded as the resume point

    # --- what others ask ---------------------------------------------------------------------------------------
    def sent_to(self) -> int:
        """Every event up to this position had its message sent once."""
        return self._sent_to

    def wait_sent(self, position: int, timeout: float = 5.0) -> bool:
        """Until the message of every event up to `position` was sent (by this process or another); the console
        waits on it after a command that starts work, so the person sees it on its way."""
        self._wake.set()
        with self._changed:
            return self._changed.wait_for(lambda: self._sent_to >= position, timeout)

    def finished(self, message_id: str) -> None:
        """The in-process worker is done with a message (jobs/service.py's middleware calls this)."""
        with self._changed:
            if self._unfinished.pop(message_id, None) is not None:
                self._wake.set()

    # --- following the log -------------------------------------------------------------------------------------
    def run_once(self) -> int:
        """One pass: sends what the log holds past the position, a page per transaction; returns how many events
        it read. A pass that finds another dispatcher at work reads where it got to instead. Raises NotSentNow
        when a message that must go first could not be sent (what went before it is recorded)."""
        with self._lock:
            read = 0
            while True:
                head = self.verity.recorder.max_notification_id() or 0
                if head <= self._sent_to and self._recorded_position == self._resume_point():
                    return read
                with self.dispatch_log.holding() as held:
                    if held is None:
                        self._saw(self.dispatch_log.reached().sent_to)
                        return read
                    count, more, stopped = self._page(held)
                read += count
                if stopped:
                    raise NotSentNow("a message that must go first could not be sent now")
                if not more:
                    return read

    def _page(self, held: Held) -> tuple[int, bool, bool]:
        before = held.reached
        start = self._cursor if self.in_memory and self._cursor is not None else before.position
        notifications = self.verity.notification_log.select(start=start + 1, limit=PAGE_SIZE)
        cursor, stopped = start, False
        for notification in notifications:
            resent = notification.id <= before.sent_to  # sent before; a restart sends again what is lost with memory
            try:
                self._dispatch(notification, only=NOTHING_ELSE_RESENDS if resent else None)
            except NotSentNow:
                stopped = True
                break
            cursor = notification.id
        self._cursor = cursor
        reached = Reached(self._resume_point(), max(cursor, before.sent_to))
        held.record(reached)
        self._recorded_position = reached.position
        self._saw(reached.sent_to)
        return len(notifications), not stopped and len(notifications) == PAGE_SIZE, stopped

    def _resume_point(self) -> int:
        """Where a restart resumes: before the oldest message the in-process worker has not finished."""
        if self._cursor is None:
            return -1
        with self._changed:
            unfinished = min(self._unfinished.values(), default=None)
        return self._cursor if unfinished is None else min(unfinished - 1, self._cursor)

    def _saw(self, sent_to: int) -> None:
        with self._changed:
            if sent_to > self._sent_to:
                self._sent_to = sent_to
                self._changed.notify_all()

    # --- one event ---------------------------------------------------------------------------------------------
    def _dispatch(self, notification: Notification, only: set[str] | None = None) -> None:
        kind = kind_of(notification)
        if kind is None or (only is not None and kind not in only):
            return
        if not (self.in_memory and kind in NOTHING_ELSE_RESENDS):
            self.routes.send(notification, kind)
            return
        with self._changed:  # a worker done with the message at once waits until it is known as unfinished
            message = self.routes.send(notification, kind)
            if message is not None:
                self._unfinished[message.message_id] = notification.id

    # --- in the background -------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._follow, name="jobs-dispatcher", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self.dispatch_log.close()

    def _follow(self) -> None:
        while not self._stopping.is_set():
            pause = POLL_SECONDS
            self._wake.clear()  # a wake-up from now on ends the pause below at once
            try:
                self.run_once()
            except NotSentNow:  # said in the log as it happened; nothing after it goes first
                pause = TRY_AGAIN_SECONDS
            except Exception:  # the database or the broker out of reach: the next pass tries again
                log.exception("the jobs' dispatcher could not follow the event log; trying again")
                pause = TRY_AGAIN_SECONDS
            self._wake.wait(pause)
