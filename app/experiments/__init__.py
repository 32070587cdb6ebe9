"""Experiments: the New experiment form, the list, an experiment's page (the reward, the round while training,
how training ended, the base model and the adapter side by side) with Stop, and the API under /api/experiments."""

from app.experiments.api import ExperimentsApiController
from app.experiments.forms import NewExperimentPageController
from app.experiments.pages import ExperimentsPageController

API_CONTROLLERS = [ExperimentsApiController]
PAGE_CONTROLLERS = [NewExperimentPageController, ExperimentsPageController]
