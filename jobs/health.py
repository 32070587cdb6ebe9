"""What the jobs can say of their own health: whether the broker answers, and what waits on each provider's queue.

The queues' figures come from the jobs' ledger (jobs/ledger.py), not from the broker: a run waits from the moment
the dispatcher put it on its queue until a worker claims it, whichever broker carries the message, and every web
process reads the same rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import dramatiq

from jobs.broker import is_embedded
from jobs.ledger import Ledger
from jobs.periodic import Periodic


def broker_problem(broker: dramatiq.Broker) -> str | None:
    """Why the broker can't carry a message now, in words; None when it answers (the in-process one always does)."""
    if is_embedded(broker):
        return None
    try:
        client = getattr(broker, "client", None)
        if client is not None:  # Redis
            client.ping()
            return None
        import pika  # RabbitMQ: a connection of its own, so a check never disturbs the broker's channels

        parameters = broker.parameters  # type: ignore[attr-defined]
        pika.BlockingConnection(parameters=parameters).close()
        return None
    except Exception as problem:  # any failure to reach it is the answer
        return f"The broker does not answer: {type(problem).__name__}: {problem}".strip()


@dataclass(frozen=True)
class QueueState:
    queue: str
    waiting: int  # runs sent to the queue that no worker has claimed yet
    oldest_seconds: float  # how long the longest-waiting of them has waited; 0 when none waits
    workers: int  # workers serving the queue whose heartbeat is fresh


def queue_states(ledger: Ledger, stale_after: float, now: float | None = None) -> list[QueueState]:
    """Every queue a run waits on or a live worker serves, by name."""
    now = time.time() if now is None else now
    waiting: dict[str, list[float]] = {}
    for lease in ledger.leases():
        if lease.worker_id is None:
            waiting.setdefault(lease.queue, []).append(lease.enqueued_at or now)
    serving: dict[str, int] = {}
    for worker in ledger.workers():
        if worker.beat_at >= now - stale_after:
            for queue in worker.queues:
                serving[queue] = serving.get(queue, 0) + 1
    return [
        QueueState(
            queue=name,
            waiting=len(waiting.get(name, [])),
            oldest_seconds=max(0.0, now - min(waiting[name])) if waiting.get(name) else 0.0,
            workers=serving.get(name, 0),
        )
        for name in sorted(waiting.keys() | serving.keys())
    ]


def worker_heartbeat(ledger: Ledger, worker_id: str, every: float) -> Periodic:
    """The embedded worker's heartbeat in the ledger (a `verity worker` beats from its main loop), so the queues'
    figures count it among the live workers."""
    return Periodic("verity-worker-heartbeat", every, lambda: ledger.worker_beat(worker_id),
                    "could not record the worker's heartbeat")
