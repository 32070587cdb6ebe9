"""Training loops: the list, a loop's page (best score, target, rounds, elapsed, bars per round, the rounds) with
Stop, and the API under /api/loops."""

from app.loops.api import LoopsApiController
from app.loops.forms import NewLoopPageController
from app.loops.pages import LoopsPageController

API_CONTROLLERS = [LoopsApiController]
PAGE_CONTROLLERS = [NewLoopPageController, LoopsPageController]
