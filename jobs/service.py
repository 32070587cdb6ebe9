"""The jobs as the web process (or a test) runs them: `start(settings, verity, read_models)` at app start.

On the embedded default (no broker URL) it also runs the worker, in this process, on an in-memory broker: the
runs that were launched but never started are put back on their queues first, and runs a previous process was
training are ended by the reconciler. In production it only sends messages and reconciles; `verity worker`
processes on the GPU machines do the training.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import dramatiq

from domain.application import Verity
from jobs.actors import Jobs, declare_actors
from jobs.broker import build_broker, is_embedded, provider_queue
from jobs.config import CONTROL_QUEUE, DEFAULT_PROVIDER, JobsConfig
from jobs.context import JobContext
from jobs.ledger import Ledger
from jobs.readiness import launch_readiness
from jobs.reconciler import PeriodicReconciler, reconcile
from verity.config import Settings

log = logging.getLogger(__name__)


@dataclass
class JobsHandle:
    """What the app holds: `launch` is the app's launcher (create_app(..., launcher=handle.launch))."""

    jobs: Jobs
    reconciler: PeriodicReconciler
    workers: list[dramatiq.Worker] = field(default_factory=list)
    stopped: bool = False
    queues_here: list[str] = field(default_factory=list)  # the provider queues this process's own worker serves

    @property
    def launch_problem(self) -> Callable[[Mapping[str, Any]], str | None]:
        """The console's check at Launch: why this process's worker could not train a run (jobs/readiness.py)."""
        return launch_readiness(self.queues_here)

    @property
    def ctx(self) -> JobContext:
        return self.jobs.ctx

    def launch(self, run_id: UUID) -> None:
        """Called after a launch (or a retry) is recorded. A broker that can't be reached now is not the
        person's problem: the run stays Queued and the reconciler sends it again."""
        try:
            self.jobs.send_launch(run_id)
        except Exception:
            log.exception("run %s could not be put on its queue now; the reconciler will try again", run_id)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.reconciler.stop()
        for worker in self.workers:
            worker.stop()
        if self.workers:
            self.ctx.ledger.worker_stopped(self.ctx.worker_id)
        self.jobs.broker.close()


def start_workers(broker: dramatiq.Broker, queues: list[str]) -> list[dramatiq.Worker]:
    """One thread trains (a GPU runs one run at a time); another serves the control queue, so a cancel or a
    reconcile never waits behind a run."""
    for queue in [*queues, CONTROL_QUEUE]:
        broker.declare_queue(queue)
    workers = [
        dramatiq.Worker(broker, queues=set(queues), worker_threads=1, worker_timeout=200),
        dramatiq.Worker(broker, queues={CONTROL_QUEUE}, worker_threads=1, worker_timeout=200),
    ]
    for worker in workers:
        worker.start()
    return workers


def start(
    settings: Settings,
    verity: Verity,
    read_models=None,
    *,
    config: JobsConfig | None = None,
    on_child=None,
) -> JobsHandle:
    """Build the broker and actors from the settings; on the embedded default, run the worker here too."""
    config = config or JobsConfig.from_env()
    broker = build_broker(settings)
    ctx = JobContext(settings, verity, Ledger(settings), config, read_models=read_models)
    jobs = declare_actors(broker, ctx, on_child=on_child)
    embedded = is_embedded(broker)
    workers: list[dramatiq.Worker] = []
    queues_here = [provider_queue(DEFAULT_PROVIDER)] if embedded else []
    if embedded:
        workers = start_workers(broker, queues_here)
        ctx.ledger.worker_started(ctx.worker_id, queues_here, config.worker_gpu, config.worker_price_per_hour)
    try:
        ended = reconcile(ctx, jobs.send_launch, startup_of_embedded=embedded)
        if ended:
            log.warning("at start-up the reconciler ended %d run(s) left by a stopped process", len(ended))
    except Exception:
        log.exception("the start-up reconcile failed; the periodic one will try again")
    reconciler = PeriodicReconciler(ctx, jobs.send_launch, config.reconcile_every_seconds)
    reconciler.start()
    return JobsHandle(jobs=jobs, reconciler=reconciler, workers=workers, queues_here=queues_here)
