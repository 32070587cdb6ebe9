"""This process's Prometheus registry, shared by the web process's /-/metrics and a worker's health port."""

from __future__ import annotations

import os

from prometheus_client import REGISTRY, CollectorRegistry, multiprocess


def process_registry() -> CollectorRegistry:
    """This process's figures, or with PROMETHEUS_MULTIPROC_DIR those of every process writing there, summed."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY
