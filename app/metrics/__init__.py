"""Custom metrics: register a Python metric, edit it (a new version), archive a version; the reward choices."""

from app.metrics.api import CustomMetricsApiController, CustomMetricVersionsApiController
from app.metrics.pages import MetricsPageController

API_CONTROLLERS = [CustomMetricsApiController, CustomMetricVersionsApiController]
PAGE_CONTROLLERS = [MetricsPageController]
