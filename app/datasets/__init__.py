"""Datasets: create one, upload versions of its examples (streamed to storage), browse a version."""

from app.datasets.api import DatasetsApiController, DatasetVersionsApiController
from app.datasets.pages import DatasetsPageController

API_CONTROLLERS = [DatasetsApiController, DatasetVersionsApiController]
PAGE_CONTROLLERS = [DatasetsPageController]
