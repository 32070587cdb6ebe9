"""A worker's /healthz, /readyz and /metrics on its own port, and what the jobs say of each provider's queue."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import httpx
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker

from jobs.counters import RECONCILER_ACTIONS
from jobs.health import broker_problem, queue_states
from jobs.health_server import serve_health

if TYPE_CHECKING:
    from conftest import World


def test_a_worker_answers_its_probes_and_its_scrape_on_its_own_port(world: World) -> None:
    server = serve_health(world.ctx, StubBroker(), 0)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert httpx.get(f"{url}/healthz").json() == {"status": "up"}
        ready = httpx.get(f"{url}/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"ready": True, "worker": world.ctx.worker_id,
                                "checks": {"event_store": "ok", "ledger": "ok", "broker": "ok"}}
        RECONCILER_ACTIONS.labels("resumed").inc(0)  # the series exists once a label is used
        assert 'verity_reconciler_actions_total{action="resumed"}' in httpx.get(f"{url}/metrics").text
        assert httpx.get(f"{url}/anything").status_code == 404
    finally:
        server.shutdown()


def test_a_worker_whose_broker_does_not_answer_is_not_ready(world: World) -> None:
    broker = RedisBroker(url="redis://127.0.0.1:1/0")  # nothing listens on port 1
    assert broker_problem(broker).startswith("The broker does not answer: ConnectionError")
    server = serve_health(world.ctx, broker, 0)
    try:
        ready = httpx.get(f"http://127.0.0.1:{server.server_address[1]}/readyz", timeout=30)
        assert ready.status_code == 503
        assert ready.json()["checks"]["broker"].startswith("The broker does not answer")
        assert ready.json()["checks"]["event_store"] == "ok"
    finally:
        server.shutdown()


def test_the_queues_say_what_waits_how_long_and_who_serves_them(world: World) -> None:
    ledger = world.ctx.ledger
    waiting, held = world.launched(), world.launched()
    ledger.enqueued(waiting, "local")
    ledger.enqueued(held, "local")
    ledger.enqueued(world.launched(), "h100-pool")
    ledger.claim(held, "local", "worker-a", 4242, stale_after=30)
    ledger.worker_started("worker-a", ["local"], "cpu", None)

    states = {state.queue: state for state in queue_states(ledger, stale_after=30, now=time.time() + 60)}

    assert (states["local"].waiting, states["local"].workers) == (1, 0)  # worker-a's beat is 60 s old by then
    assert 59 <= states["local"].oldest_seconds <= 70
    assert (states["h100-pool"].waiting, states["h100-pool"].workers) == (1, 0)
    fresh = {state.queue: state for state in queue_states(ledger, stale_after=30)}
    assert fresh["local"].workers == 1
