"""A worker's own /healthz, /readyz and /metrics on a port of its own (`verity worker --health-port`), for the
probes and scrapes of whoever runs the GPU machines: a worker serves no web pages, so a small HTTP server in a
thread answers them.

/readyz is ready when the event store, the jobs' ledger and the broker answer; /metrics is this process's
prometheus-client registry (the reconciler's actions; PROMETHEUS_MULTIPROC_DIR sums several processes).
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import dramatiq
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from jobs.context import JobContext
from jobs.health import broker_problem
from verity.prometheus import process_registry

log = logging.getLogger(__name__)


def readiness(ctx: JobContext, broker: dramatiq.Broker) -> dict[str, str]:
    """Each check "ok", or what does not answer in words."""
    checks: dict[str, str] = {}
    for name, probe in {"event_store": ctx.verity.recorder.max_notification_id, "ledger": ctx.ledger.workers}.items():
        try:
            probe()
            checks[name] = "ok"
        except Exception as failure:  # whatever fails, the check's answer is "not ready" and why
            checks[name] = f"{type(failure).__name__}: {failure}"[:300]
    checks["broker"] = broker_problem(broker) or "ok"  # it answers in words itself
    return checks


def serve_health(ctx: JobContext, broker: dramatiq.Broker, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """Starts the server in a daemon thread; `shutdown()` on the answer stops it. Port 0 takes a free one."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server calls it by this name
            if self.path == "/healthz":
                self._answer(200, "application/json", json.dumps({"status": "up"}).encode())
            elif self.path == "/readyz":
                checks = readiness(ctx, broker)
                ready = all(value == "ok" for value in checks.values())
                body = json.dumps({"ready": ready, "checks": checks, "worker": ctx.worker_id}).encode()
                self._answer(200 if ready else 503, "application/json", body)
            elif self.path == "/metrics":
                self._answer(200, CONTENT_TYPE_LATEST, generate_latest(process_registry()))
            else:
                self._answer(404, "text/plain", b"Not found: /healthz, /readyz and /metrics are served here.\n")

        def _answer(self, status: int, media_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", media_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("health: " + format, *args)  # probes every few seconds would drown the worker's log

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="worker-health", daemon=True).start()
    log.info("worker %s answers /healthz, /readyz and /metrics on %s:%s", ctx.worker_id, host,
             server.server_address[1])
    return server
