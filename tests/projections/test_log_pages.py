"""The projections read the log's pages themselves: the same notifications as eventsourcing's select gives."""

from __future__ import annotations

import pytest

from domain.runs.settings import run_body_from_api
from projections.log_pages import LogPages
from tests.rounds import scored_round
from verity.wiring import build_application, build_read_models, ensure_default_organization

FIELDS = ("id", "originator_id", "originator_version", "topic", "state")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_page_holds_what_the_librarys_notification_log_gives(backend, request, owner):
    if backend == "postgres":
        request.applymarker(pytest.mark.postgres)
    settings = request.getfixturevalue(f"{backend}_settings")
    verity = build_application(settings)
    read_models = build_read_models(settings)
    try:
        org_id, project_id = ensure_default_organization(settings, verity, read_models)
        body = run_body_from_api(
            {"training": {"rl": {"rounds": 5, "reward": {"preset": "verifiable", "metric": "math_pairs"}}}}
        )
        for _ in range(2):
            run_id = verity.save_run(org_id, project_id, body, owner).id
            verity.launch_run(org_id, run_id, owner, "owner")
            verity.record_preparing(run_id)
            for number in range(3):
                verity.record_round_scored(run_id, scored_round(number, 0.3))
        last = verity.recorder.max_notification_id()
        pages = LogPages(verity)
        for start, limit in ((1, 1000), (2, 3), (last, 5), (last + 1, 5)):
            ours = [tuple(getattr(n, field) for field in FIELDS) for n in pages.select(start, limit)]
            theirs = verity.notification_log.select(start=start, limit=limit)
            assert ours == [tuple(getattr(n, field) for field in FIELDS) for n in theirs]
        assert len(pages.select(1, 1000)) == last > 10
        page = pages.select(1, 1000)  # an aggregate's id is parsed once for all its events
        assert len({id(n.originator_id) for n in page}) == len({n.originator_id for n in page})
    finally:
        close = getattr(read_models.tables, "close", None)
        if close is not None:
            close()
        verity.close()
