"""/-/metrics: the console's figures for Prometheus, outside /api (a scraper is no API client).

Two kinds of figures:
- this process's own, in prometheus-client's registry: the HTTP requests by route and status with their latency
  (Litestar's Prometheus middleware, `request_metrics`), the reconciler's actions (jobs/counters.py). With
  PROMETHEUS_MULTIPROC_DIR set (several web processes), every process writes them there and each scrape sums them;
- the console's, read from the shared read models, the event store and the jobs' ledger at each scrape, so every
  process answers the same: runs by state, rounds finished, seconds per phase of a round, metric failures by
  kind, custom metrics' sandbox batches by outcome, projection lag, and what waits on each provider's queue.

VERITY_METRICS_TOKEN, when set, is the bearer token a scrape must send.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from litestar import Request, get
from litestar.plugins.prometheus import PrometheusConfig
from litestar.response import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.auth.guard import PUBLIC
from app.shell.dependencies import ReadModelsDep
from app.shell.jobs import ConsoleJobs, jobs_of
from domain.application import Verity
from projections.operations import OperationsTotals, operations_totals
from projections.runner import decode
from projections.store import ReadModels
from verity.prometheus import process_registry

METRICS_PATH = "/-/metrics"


def request_metrics() -> PrometheusConfig:
    """Requests by route (its template, not each run's id), method and status, with a latency histogram. The
    scrapes, static files and the live pages' empty polls are requests too, but say nothing of the console."""
    return PrometheusConfig(
        app_name="verity", prefix="verity_http", group_path=True, exclude=[f"^{METRICS_PATH}", "^/static/"],
        buckets=[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0],
    )


class ConsoleCollector(Collector):
    """The console's figures at the moment of the scrape."""

    def __init__(self, verity: Verity, read_models: ReadModels, jobs: ConsoleJobs | None) -> None:
        self.verity, self.read_models, self.jobs = verity, read_models, jobs

    def collect(self) -> Iterator[Metric]:
        totals = operations_totals(self.read_models.tables)  # type: ignore[attr-defined]
        runs = GaugeMetricFamily("verity_runs", "Runs by state.", labels=["state"])
        for state, count in sorted(totals.runs_by_state.items()):
            runs.add_metric([state], count)
        yield runs
        yield CounterMetricFamily("verity_rounds_finished", "RL rounds trained, over every run.",
                                  value=totals.rounds_finished)
        phases = CounterMetricFamily("verity_round_phase_seconds", "Seconds spent in each phase of the rounds "
                                     "(sampling, grading, update, validation), over every run.", labels=["phase"])
        for phase, seconds in totals.phase_seconds.items():
            phases.add_metric([phase], seconds)
        yield phases
        yield from self._reward_health(totals)
        yield from self._lag()
        yield from self._queues()

    @staticmethod
    def _reward_health(totals: OperationsTotals) -> Iterator[Metric]:
        """Metric failures by kind, every kind named, and the custom metrics' sandbox batches by outcome. Failures
        of rounds recorded before kinds were counted are the kind "unknown", so the kinds sum to the total."""
        failures = CounterMetricFamily("verity_metric_failures", "Graded answers whose metric failed, by kind "
                                       "(execution, result, timeout, memory, output), over every round.",
                                       labels=["kind"])
        for kind, count in totals.failures_by_kind.items():
            failures.add_metric([kind], count)
        unknown = totals.metric_failures - sum(totals.failures_by_kind.values())
        if unknown > 0:
            failures.add_metric(["unknown"], unknown)
        yield failures
        batches = CounterMetricFamily("verity_sandbox_batches", "Batches of answers a custom metric's sandbox "
                                      "graded, by outcome: scored (no answer failed) or the kind of the batch's "
                                      "first failure, over every round.", labels=["outcome"])
        for outcome, count in totals.sandbox_batches.items():
            batches.add_metric([outcome], count)
        yield batches

    def _lag(self) -> Iterator[Metric]:
        head = self.verity.recorder.max_notification_id() or 0
        reached = self.read_models.position()
        behind = max(0, head - reached)
        yield GaugeMetricFamily("verity_projection_lag_events", "Events the read models have yet to apply.",
                                value=behind)
        seconds = 0.0
        if behind:
            [oldest] = self.verity.recorder.select_notifications(start=reached + 1, limit=1)
            seconds = max(0.0, time.time() - datetime.fromisoformat(decode(self.verity, oldest).time).timestamp())
        yield GaugeMetricFamily("verity_projection_lag_seconds", "How long the oldest event the read models have "
                                "yet to apply has waited.", value=seconds)

    def _queues(self) -> Iterator[Metric]:
        states = self.jobs.queue_states() if self.jobs is not None else []
        waiting = GaugeMetricFamily("verity_queue_waiting", "Runs sent to a provider's queue that no worker has "
                                    "claimed yet.", labels=["queue"])
        oldest = GaugeMetricFamily("verity_queue_oldest_seconds", "How long the longest-waiting run on a provider's "
                                   "queue has waited (0 when none waits).", labels=["queue"])
        workers = GaugeMetricFamily("verity_queue_workers", "Workers serving a provider's queue whose heartbeat is "
                                    "fresh.", labels=["queue"])
        for state in states:
            waiting.add_metric([state.queue], state.waiting)
            oldest.add_metric([state.queue], state.oldest_seconds)
            workers.add_metric([state.queue], state.workers)
        yield from (waiting, oldest, workers)


def _allowed(request: Request[Any, Any, Any]) -> bool:
    token = os.environ.get("VERITY_METRICS_TOKEN", "")
    if not token:
        return True
    return hmac.compare_digest(request.headers.get("authorization", ""), f"Bearer {token}")


@get(METRICS_PATH, name="service:metrics", opt={PUBLIC: True}, include_in_schema=False, sync_to_thread=True)
def metrics(request: Request[Any, Any, Any], verity: Verity, read_models: ReadModelsDep) -> Response[bytes]:
    if not _allowed(request):
        return Response(b"This scrape needs the bearer token VERITY_METRICS_TOKEN names.\n", status_code=401,
                        media_type="text/plain")
    console = CollectorRegistry()
    console.register(ConsoleCollector(verity, read_models, jobs_of(request)))
    body = generate_latest(process_registry()) + generate_latest(console)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


