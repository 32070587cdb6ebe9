"""The Timeline tab reads only the events it shows: the newest 100, oldest of them first, and says how many in all."""

from __future__ import annotations

import re

from consoles import ClientConsole, client_console
from rounds import scored_round

from app.runs.view import TIMELINE_SHOWN
from domain.actors import Actor
from domain.runs.settings import run_body_from_api

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}
REWARD = {"preset": "verifiable", "metric": "math_pairs", "synthetic_prompts": 64}


def test_the_timeline_shows_its_newest_events_and_all_of_them_on_show_all(sqlite_settings):
    with client_console(sqlite_settings, ClientConsole) as console:
        body = {"name": "long", "training": {"rl": {"rounds": 200, "reward": REWARD}}}
        run_id = console.verity.save_run(console.org_id, console.project_id, run_body_from_api(body), OWNER).id
        console.verity.launch_run(console.org_id, run_id, OWNER, "owner")
        console.verity.record_preparing(run_id)
        for number in range(TIMELINE_SHOWN + 5):
            console.verity.record_round_scored(run_id, scored_round(number, 0.3, reward=None if number == 0 else 0.4))
        console.settle()
        every = [entry.sentence for entry in console.read_models.timeline(console.org_id, run_id)]
        assert console.read_models.timeline_length(console.org_id, run_id) == len(every) > TIMELINE_SHOWN + 5
        newest = console.read_models.timeline(console.org_id, run_id, TIMELINE_SHOWN)
        assert [entry.sentence for entry in newest] == every[-TIMELINE_SHOWN:]

        part = console.client.get(f"/runs/{run_id}/timeline", headers=HTMX).text
        assert f"The latest {TIMELINE_SHOWN} of {len(every)} events." in part
        assert re.findall(r'<time datetime="[^"]+">', part).__len__() == TIMELINE_SHOWN
        shown = re.findall(r"<div>(.*?) <span class=\"who\">", part)
        assert shown == every[-TIMELINE_SHOWN:]  # oldest of them first, as the whole timeline reads
        everything = console.client.get(f"/runs/{run_id}/timeline?all=1", headers=HTMX).text
        assert re.findall(r"<div>(.*?) <span class=\"who\">", everything) == every
        assert "Show all" not in everything
