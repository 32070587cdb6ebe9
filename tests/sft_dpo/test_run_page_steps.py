"""An SFT run's page: its loss chart and steps table (newest first) follow the run live, in place of RL's rounds."""

from __future__ import annotations

import json
import re
from html import unescape

from consoles import default_organization
from dataset_versions import recorded_version
from litestar.testing import TestClient

from app.auth.testing import sign_in_as
from app.factory import create_app
from domain.actors import Actor
from domain.runs.progress import StepLog
from domain.runs.settings import run_body_from_api
from projections.runner import ProjectionRunner

OWNER = Actor("person", "owner@localhost", "owner@localhost")
HTMX = {"HX-Request": "true"}


def test_an_sft_runs_page_charts_its_loss_and_lists_its_steps_while_live(sqlite_settings):
    verity, read_models, org_id, project_id = default_organization(sqlite_settings)
    dataset_id = verity.create_dataset(org_id, "math", OWNER).id
    version_id = recorded_version(verity, org_id, dataset_id, OWNER, storage_key="datasets/m")
    body = {"name": "sft", "dataset_version": str(version_id), "training": {"objective": "sft"}}
    run_id = verity.save_run(org_id, project_id, run_body_from_api(body), OWNER).id
    verity.launch_run(org_id, run_id, OWNER, "member")
    verity.record_preparing(run_id)
    runner = ProjectionRunner(verity, read_models)
    app = create_app(verity, read_models, runner=runner, debug=True)

    def settle() -> None:
        assert read_models.wait_for(verity.recorder.max_notification_id() or 0, timeout=10)

    with TestClient(app) as client:
        sign_in_as(client, verity, read_models, org_id)
        settle()
        page = client.get(f"/runs/{run_id}").text
        assert "Losses appear here once the trainer logs its first step." in page
        assert "Rewards appear here" not in page and 'id="run-rounds"' not in page

        verity.record_step_logged(run_id, StepLog(1, 2, 0.5, 2.0, 1.0))
        settle()
        part = client.get(f"/runs/{run_id}/steps", headers=HTMX)
        assert part.status_code == 200 and "1 / 2" in part.text
        stamp = re.search(r"\?v=([0-9a-f]+)", part.text).group(1)
        assert client.get(f"/runs/{run_id}/steps?v={stamp}", headers=HTMX).status_code == 204

        verity.record_step_logged(run_id, StepLog(2, 2, 1.0, 1.5, 2.0, validation_loss=1.4))
        settle()
        redrawn = client.get(f"/runs/{run_id}/steps?v={stamp}", headers=HTMX).text
        rows = re.findall(r"<td class=\"num\">(\d) / 2</td>", redrawn)
        assert rows == ["2", "1"]  # newest first
        chart = json.loads(unescape(re.search(r'data-chart="([^"]+)"', redrawn).group(1)))
        assert chart["x"] == [1, 2] and chart["x_title"] == "Step"
        assert [s["y"] for s in chart["series"]] == [[2.0, 1.5], [None, 1.4]]
        assert "Training · step 2 / 2" in client.get(f"/runs/{run_id}").text

        verity.record_saving_adapter(run_id)
        verity.record_adapter_ready(run_id, 2, f"runs/{run_id}/adapter", "ab" * 32, 2048)
        verity.record_completed(run_id)
        settle()
        ended = client.get(f"/runs/{run_id}/steps", headers=HTMX).text
        assert "hx-trigger" not in ended  # the run ended: the part stops polling
        summary = client.get(f"/runs/{run_id}/summary", headers=HTMX).text
        assert "Steps done</dt><dd>2 of 2" in summary and "2,048 bytes" in summary and "Rounds done" not in summary
