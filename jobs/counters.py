"""The jobs' own Prometheus counters, kept in the process that acts (the web process's reconciler, a worker's).

prometheus-client's default registry holds them; with PROMETHEUS_MULTIPROC_DIR set, each process writes its counts
to that folder and the metrics endpoint sums them (README: "Metrics").
"""

from __future__ import annotations

from prometheus_client import Counter

RECONCILER_ACTIONS = Counter(
    "verity_reconciler_actions",
    "What the reconciler did: resumed a run whose worker was lost, failed one it could not resume, kept an adapter "
    "saved before its worker was lost, put a Queued run back on its queue, raised a quiet run's alarm (quiet), or "
    "failed an evaluation, probe or re-scoring whose worker was lost (failed_evaluation, failed_probe, "
    "failed_rescoring).",
    ["action"],
)
