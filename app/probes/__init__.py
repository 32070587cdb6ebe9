"""Reward probes (under Tune): the list, Probe a reward, a probe's page with its answers read from storage on demand,
and the API under /api/probes."""

from app.probes.api import ProbesApiController
from app.probes.pages import ProbesPageController

API_CONTROLLERS = [ProbesApiController]
PAGE_CONTROLLERS = [ProbesPageController]
