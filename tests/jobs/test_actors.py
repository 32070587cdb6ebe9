"""The actors over a real broker: RabbitMQ carries a cancel sent by another service to a worker's control queue.
And the web process stays light: the jobs it imports pull in no model library."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

import dramatiq

from domain.actors import Actor
from jobs.actors import declare_actors
from jobs.broker import build_broker
from jobs.config import CONTROL_QUEUE

if TYPE_CHECKING:
    from conftest import World

AGENT = Actor("token", "t-1", "token deploy-bot")


def test_a_cancel_sent_through_rabbitmq_is_recorded_with_who_cancelled(world: World) -> None:
    queue = f"verity-test-{uuid.uuid4().hex[:8]}"
    settings = replace(world.settings, broker_url="amqp://guest:guest@127.0.0.1:5672/")
    broker = build_broker(settings)
    jobs = declare_actors(broker, world.ctx)
    run_id = world.launched()
    message = jobs.cancel_run.message(str(run_id), AGENT.to_dict()).copy(queue_name=queue)
    broker.declare_queue(queue)
    broker.enqueue(message)
    worker = dramatiq.Worker(broker, queues={queue, CONTROL_QUEUE}, worker_threads=1)
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while world.verity.get_run(None, run_id).state != "cancelled" and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        worker.stop()
        broker.channel.queue_delete(queue)
        broker.close()

    assert world.verity.get_run(None, run_id).state == "cancelled"


def test_the_web_process_imports_the_jobs_without_any_model_library() -> None:
    probe = (
        "import sys, jobs.service, jobs.worker, jobs.reconciler\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'peft', 'vllm', 'trl') if m in sys.modules)\n"
        "print(','.join(heavy))"
    )
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert found == ""
