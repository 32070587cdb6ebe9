"""What an actor needs, built once per process at worker boot or app start: nothing connects at import."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from domain.actors import Actor
from domain.application import Verity
from jobs.config import JobsConfig
from jobs.ledger import Ledger
from verity.config import Settings

if TYPE_CHECKING:
    from projections.store import ReadModels

RECONCILER = Actor("system", "reconciler", "Reconciler")
JOBS = Actor("system", "jobs", "Jobs")  # what the jobs record of their own sending (jobs/dispatcher.py)


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass
class JobContext:
    settings: Settings
    verity: Verity
    ledger: Ledger
    config: JobsConfig
    read_models: ReadModels | None = None  # to find Queued runs after a restart; the web process has them
    worker_id: str = field(default_factory=new_worker_id)

    @property
    def worker_words(self) -> str:
        """This worker as the timeline names one that stopped: "The worker running this run (gpu-7, process 42)"."""
        host, process = self.worker_id.split(":")[:2]
        return f"The worker running this run ({host}, process {process})"

    @property
    def worker_actor(self) -> Actor:
        """The actor of what a worker records itself (Preparing, a dead trainer, the watchdog)."""
        host, process = self.worker_id.split(":")[:2]
        return Actor("system", f"worker:{self.worker_id}", f"Worker {host} (process {process})")
