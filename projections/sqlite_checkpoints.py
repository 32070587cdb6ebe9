"""The read models' SQLite write-ahead log: switched on, and copied back into the database by a thread of its own,
not by the writer.

Why. SQLite's automatic checkpoint runs inside the COMMIT that passes 1,000 pages of log, and waits on the disk
(fsync): during catch-up that was 12-15 µs an event, a sixth of the whole. Here a writer's connection does not
checkpoint (`PRAGMA wal_autocheckpoint=0`); after each commit it nudges this thread, which runs a PASSIVE
checkpoint (it never blocks readers or the writer) at most once per CHECKPOINT_SECONDS, while the writer goes on
with the next page. What a commit made durable is unchanged: with synchronous=NORMAL in WAL mode a commit never
waited for the disk, and the log is the database until it is copied.

The thread starts at the first nudge and ends after IDLE_SECONDS without one, so an idle data folder holds no
thread and no connection.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

CHECKPOINT_SECONDS = 1.0  # the log holds at most about this long of writes
IDLE_SECONDS = 5.0
log = logging.getLogger(__name__)


class BackgroundCheckpoints:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._nudged = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def nudge(self) -> None:
        """A writer committed: checkpoint soon."""
        self._nudged.set()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._follow, name="read-model-checkpoints", daemon=True)
                self._thread.start()

    def _follow(self) -> None:
        while True:
            if not self._nudged.wait(IDLE_SECONDS):
                with self._lock:
                    if not self._nudged.is_set():  # a nudge after the wait timed out keeps this thread going
                        self._thread = None
                        return
            self._nudged.clear()
            self.checkpoint()
            time.sleep(CHECKPOINT_SECONDS)

    def checkpoint(self) -> None:
        """Copies what the log holds into the database, as far as no reader still needs it (PASSIVE)."""
        try:
            # read-write, never create: a folder removed meanwhile gets no empty database
            connection = sqlite3.connect(f"file:{self.path}?mode=rw", uri=True, timeout=0)
            try:
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                connection.close()
        except sqlite3.Error as error:  # another process's checkpoint, or the folder gone: the next nudge retries
            log.debug("Read-model checkpoint skipped: %s", error)


def use_write_ahead_log(connection: sqlite3.Connection, tries: int = 100) -> None:
    """Switch a new database to WAL. Switching needs the database to itself, and SQLite answers "database is
    locked" at once, without its busy timeout, while another process opens the same new database (several
    processes migrate a new data folder together): wait for it, a moment at a time."""
    for _ in range(tries - 1):
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error):
                raise
            time.sleep(0.05)
    connection.execute("PRAGMA journal_mode=WAL")
