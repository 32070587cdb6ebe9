"""The jobs as the web process (or a test) runs them: `start(settings, verity, read_models)` at app start.

The console only records commands; the jobs follow the event log (jobs/dispatcher.py) and send what each recorded
event asks for, so the handle gives the console nothing to call but what it may know: why this process's worker
could not train a run (launch readiness), and a wait until what it recorded was sent.

On the embedded default (no broker URL) it also runs the worker, in this process, on an in-memory broker. At
start-up, before that worker takes anything: runs a previous process was training are ended by the reconciler and
the runs it had put on its queue are put back; merges it had under way end in words; then the dispatcher sends what
was recorded but not yet sent, and again the evaluations and steps the previous process's memory held. In
production it dispatches and reconciles; `verity worker` processes on the GPU machines do the training.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import dramatiq

from domain.application import Verity
from domain.runs.run_settings import RunSettings
from jobs.actors import Jobs, declare_actors
from jobs.broker import build_broker, is_embedded, provider_queue
from jobs.config import CONTROL_QUEUE, DEFAULT_PROVIDER, JobsConfig
from jobs.context import JobContext
from jobs.dispatch_log import DispatchLog
from jobs.dispatch_routes import NotSentNow
from jobs.dispatcher import Dispatcher
from jobs.health import QueueState, broker_problem, queue_states, worker_heartbeat
from jobs.ledger import Ledger
from jobs.merge import fail_merges_lost_at_restart
from jobs.periodic import Periodic
from jobs.readiness import launch_readiness
from jobs.reconciler import periodic_reconciler, reconcile
from verity.config import Settings

log = logging.getLogger(__name__)


@dataclass
class JobsHandle:
    """What the web process holds (app/shell/jobs.py's ConsoleJobs): it stops the jobs with the console."""

    jobs: Jobs
    dispatcher: Dispatcher
    reconciler: Periodic
    workers: list[dramatiq.Worker] = field(default_factory=list)
    stopped: bool = False
    queues_here: list[str] = field(default_factory=list)  # the provider queues this process's own worker serves
    heartbeat: Periodic | None = None  # the embedded worker's, in the ledger

    @property
    def ctx(self) -> JobContext:
        return self.jobs.ctx

    @property
    def embedded(self) -> bool:
        """The jobs' one worker runs in this process, on an in-memory broker."""
        return bool(self.workers)

    def launch_problem(self, settings: RunSettings) -> str | None:
        """The console's check at Launch: why this process's worker could not train a run (jobs/readiness.py)."""
        return launch_readiness(self.queues_here)(settings)

    def wait_sent(self, position: int, timeout: float = 5.0) -> bool:
        """Until the jobs have sent what the event log holds up to `position` (jobs/dispatcher.py)."""
        return self.dispatcher.wait_sent(position, timeout)

    def ready_problem(self) -> str | None:
        """Why the jobs can't send work now (the broker does not answer), in words; None when they can."""
        return broker_problem(self.jobs.broker)

    def queue_states(self) -> list[QueueState]:
        """What waits on each provider's queue, and the live workers serving it (jobs/health.py)."""
        return queue_states(self.ctx.ledger, self.ctx.config.stale_after_seconds)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.reconciler.stop()
        if self.heartbeat is not None:
            self.heartbeat.stop()
        self.dispatcher.stop()
        for worker in self.workers:
            worker.stop()
        if self.workers:
            self.ctx.ledger.worker_stopped(self.ctx.worker_id)
        self.jobs.broker.close()


class FinishedMessages(dramatiq.Middleware):
    """Tells the dispatcher when the in-process worker is done with a message (handled, failed or skipped), so a
    restart of the embedded default sends again only what its memory still held."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    def after_process_message(self, broker: dramatiq.Broker, message: dramatiq.Message, *, result: Any = None,
                              exception: BaseException | None = None) -> None:
        self.dispatcher.finished(message.message_id)

    def after_skip_message(self, broker: dramatiq.Broker, message: dramatiq.Message) -> None:
        self.dispatcher.finished(message.message_id)


def start_workers(broker: dramatiq.Broker, queues: list[str]) -> list[dramatiq.Worker]:
    """One thread trains (a GPU runs one run at a time), holding one message at a time; another serves the control
    queue, so a cancel or a reconcile never waits behind a run."""
    for queue in [*queues, CONTROL_QUEUE]:
        broker.declare_queue(queue)
    trains = dramatiq.Worker(broker, queues=set(queues), worker_threads=1, worker_timeout=200)
    # One message at a time: a worker busy with a run must not hold the next run's message (dramatiq prefetches two
    # per thread) while another worker is idle, nor take it down with it if it dies.
    trains.queue_prefetch = 1
    workers = [trains, dramatiq.Worker(broker, queues={CONTROL_QUEUE}, worker_threads=1, worker_timeout=200)]
    for worker in workers:
        worker.start()
    return workers


def catch_up(dispatcher: Dispatcher) -> None:
    """What was recorded while no dispatcher ran, sent now; what can't be is the background pass's to retry."""
    try:
        dispatcher.run_once()
    except NotSentNow:
        pass  # said in the log; the dispatcher's own thread tries again
    except Exception:
        log.exception("the jobs' dispatcher could not catch up at start-up; it tries again in the background")


def start(
    settings: Settings,
    verity: Verity,
    read_models=None,
    *,
    config: JobsConfig | None = None,
    on_child=None,
) -> JobsHandle:
    """Build the broker, the actors and the dispatcher from the settings; on the embedded default, run the worker
    here too."""
    config = config or JobsConfig.from_env()
    broker = build_broker(settings)
    ctx = JobContext(settings, verity, Ledger(settings), config, read_models=read_models)
    jobs = declare_actors(broker, ctx, on_child=on_child)
    embedded = is_embedded(broker)
    dispatcher = Dispatcher(verity, jobs, DispatchLog(settings), in_memory=embedded)
    queues_here = [provider_queue(DEFAULT_PROVIDER)] if embedded else []
    try:
        ended = reconcile(ctx, jobs.send_launch, startup_of_embedded=embedded)
        if ended:
            log.warning("at start-up the reconciler ended %d run(s) left by a stopped process", len(ended))
    except Exception:
        log.exception("the start-up reconcile failed; the periodic one will try again")
    workers: list[dramatiq.Worker] = []
    heartbeat = None
    if embedded:
        fail_merges_lost_at_restart(ctx)  # the in-memory queue of the process before is gone
        broker.add_middleware(FinishedMessages(dispatcher))
        catch_up(dispatcher)  # before the worker starts, so nothing it takes is mistaken for what was lost
        workers = start_workers(broker, queues_here)
        ctx.ledger.worker_started(ctx.worker_id, queues_here, config.worker_gpu, config.worker_price_per_hour)
        heartbeat = worker_heartbeat(ctx.ledger, ctx.worker_id, config.heartbeat_seconds).start()
    dispatcher.start()
    reconciler = periodic_reconciler(ctx, jobs.send_launch, config.reconcile_every_seconds, dispatcher.sent_to)
    reconciler.start()
    return JobsHandle(jobs, dispatcher, reconciler, workers=workers, queues_here=queues_here, heartbeat=heartbeat)
