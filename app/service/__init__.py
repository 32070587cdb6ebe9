"""The console as a service its operators run: health and readiness for a load balancer, metrics for Prometheus."""

from app.service.health import healthz, readyz
from app.service.prometheus import metrics

ROUTES = [healthz, readyz, metrics]
