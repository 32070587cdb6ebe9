"""Re-scorings (under Tune, beside the reward probes): the list, Re-score with another reward, a re-scoring's page
with its moved answers read from storage on demand, and the API under /api/rescorings."""

from app.rescorings.api import RescoringsApiController
from app.rescorings.pages import RescoringsPageController

API_CONTROLLERS = [RescoringsApiController]
PAGE_CONTROLLERS = [RescoringsPageController]
