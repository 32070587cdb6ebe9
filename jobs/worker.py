"""`verity worker`: a process on a GPU machine that serves its Training provider's queue.

It declares its GPU and price per hour (VERITY_WORKER_GPU, VERITY_WORKER_PRICE_PER_HOUR) in the ledger, trains one
run at a time, serves cancels and reconciles on the control queue, and reconciles by itself every few seconds.
It follows the event log too (jobs/dispatcher.py): the steps of loops and experiments it records go on where no
console is up, and the dispatchers of all processes take turns, so each message goes once.
SIGTERM or SIGINT stops it after the message in hand (a run in training is stopped by its supervisor).
"""

from __future__ import annotations

import logging
import signal
import threading

from jobs.actors import declare_actors
from jobs.broker import build_broker, provider_queue
from jobs.config import DEFAULT_PROVIDER, JobsConfig
from jobs.context import JobContext
from jobs.dispatch_log import DispatchLog
from jobs.dispatcher import Dispatcher
from jobs.health_server import serve_health
from jobs.ledger import Ledger
from jobs.reconciler import periodic_reconciler, reconcile
from jobs.service import start_workers
from verity.config import Settings
from verity.wiring import build_application

log = logging.getLogger(__name__)


def run_worker(settings: Settings, queues: list[str] | None, health_port: int | None = None,
               health_host: str = "127.0.0.1") -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    config = JobsConfig.from_env()
    queues = [provider_queue(q) for q in (queues or [DEFAULT_PROVIDER])]
    broker = build_broker(settings)
    ctx = JobContext(settings, build_application(settings), Ledger(settings), config)
    jobs = declare_actors(broker, ctx)
    dispatcher = Dispatcher(ctx.verity, jobs, DispatchLog(settings))
    ctx.ledger.worker_started(ctx.worker_id, queues, config.worker_gpu, config.worker_price_per_hour)
    log.info("worker %s serves %s on %s at %s/hour", ctx.worker_id, ", ".join(queues), config.worker_gpu,
             config.worker_price_per_hour)
    try:
        reconcile(ctx)
    except Exception:
        log.exception("the start-up reconcile failed; the periodic one will try again")
    workers = start_workers(broker, queues)
    health = serve_health(ctx, broker, health_port, health_host) if health_port is not None else None
    dispatcher.start()
    reconciler = periodic_reconciler(ctx, None, config.reconcile_every_seconds)
    reconciler.start()

    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    while not stopping.wait(config.heartbeat_seconds):
        try:
            ctx.ledger.worker_beat(ctx.worker_id)
        except Exception:
            log.exception("could not record the worker's heartbeat")
    log.info("worker %s stopping", ctx.worker_id)
    reconciler.stop()
    dispatcher.stop()
    for worker in workers:
        worker.stop()
    ctx.ledger.worker_stopped(ctx.worker_id)
    if health is not None:
        health.shutdown()
    broker.close()
